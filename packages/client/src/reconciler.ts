import type { PolledJob, PolledOutcome } from '@jobhook/core';
import type { Client } from './create-client.js';
import type { AbandonReason, LeasedEntry, LedgerCounts, ReconcileOutcome } from '@jobhook/core/ledger';
import { resolveReconcilerOptions, type ReconcilerOptions } from './options/reconciler-options.js';
import { checkPollAnswer } from './poll-answer.js';
import { isFinished } from './poll-job.js';
import { ServiceApiError } from './service-api-error.js';

/** Shortest wait before a job whose webhook is being handled is looked at again. */
const MIN_IN_FLIGHT_WAIT_MS = 1_000;

/** What one round did. */
export interface ReconcileSummary {
  /** Entries leased. */
  leased: number;
  /** Their outcomes, by kind. */
  outcomes: Partial<Record<ReconcileOutcome['kind'], number>>;
  /** The ledger's counts after the round (`undefined` when it could not be read). */
  counts: LedgerCounts | undefined;
}

/** A running reconciliation loop. */
export interface Reconciler {
  /** Starts the loop (a round at once, then every `intervalMs`). Idempotent. */
  start(): void;
  /** Stops the loop and waits for the round in progress. Idempotent. */
  stop(): Promise<void>;
  /** Runs one round now (leases due entries, polls them): for tests and cron jobs. */
  runOnce(): Promise<ReconcileSummary>;
}

/**
 * Creates the reconciliation loop: every round it leases the ledger's due entries (jobs past their
 * result deadline with no handled result), polls the service for each
 * (`GET /v3/universal-ai/async/{job_id}`), and hands every finished one to `receiver.handlePolled`:
 * the same handlers through the same idempotency claim as the webhook, so a job is handled once
 * whichever comes first. A job not finished yet is polled again with backoff.
 *
 * It respects the service: `maxPollsPerSecond` of its own, at most `concurrency` at once, and a 429
 * pauses every poll for its `Retry-After`; a 5xx or a network error pauses the round with backoff. A
 * job the service answers 404 for (it no longer knows it), still unfinished past `horizonMs`, or
 * whose answer is larger than the client's `maxAnswerBytes`, is abandoned with a warning and a
 * metric; so is an entry that never got a job id. An answer that names another job (compared in
 * lower case) or names one twice is never handled: logged, and polled again later. With several
 * instances, each entry is polled by one at a time (the ledger's lease).
 *
 * @example
 * ```ts
 * const reconciler = createReconciler({ client, ledger, receiver, metrics: createReconcilerMetrics() });
 * reconciler.start();
 * process.on('SIGTERM', () => void reconciler.stop());
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when an option is wrong.
 */
export function createReconciler(options: ReconcilerOptions): Reconciler {
  const o = resolveReconcilerOptions(options);
  const { client, ledger, receiver, onOutcome, metrics, logger: log } = o;
  const now = (): number => o.clock.now();

  const gapMs = 1000 / o.maxPollsPerSecond;
  let nextSlot = 0;
  /** Service-wide pause (429, outage): no poll before this. */
  let pausedUntil = 0;
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  /** Waits for the next poll slot of the rate limit (and any pause). */
  async function slot(): Promise<void> {
    for (;;) {
      const t = now();
      const at = Math.max(nextSlot, pausedUntil);
      if (at <= t) {
        nextSlot = Math.max(t, nextSlot) + gapMs;
        return;
      }
      await sleep(Math.ceil(at - t));
    }
  }

  const backoff = (attempts: number): number => Math.min(o.maxPollBackoffMs, o.pollBackoffMs * 2 ** Math.min(attempts, 30));

  function report(outcome: ReconcileOutcome, summary: ReconcileSummary): void {
    summary.outcomes[outcome.kind] = (summary.outcomes[outcome.kind] ?? 0) + 1;
    try {
      metrics?.observe(outcome);
      onOutcome?.(outcome);
    } catch (err) {
      log.error({ err }, 'jobhook reconciler: onOutcome or metrics threw');
    }
  }

  async function abandon(entry: LeasedEntry, reason: AbandonReason, detail: string): Promise<ReconcileOutcome> {
    const gone = await ledger.abandon(entry.key, entry.token);
    if (gone) log.warn({ key: entry.key, jobId: entry.jobId, reason }, `jobhook reconciler: abandoned: ${detail}`);
    return { kind: 'abandoned', key: entry.key, jobId: entry.jobId, reason };
  }

  async function later(entry: LeasedEntry, waitMs: number, outcome: ReconcileOutcome): Promise<ReconcileOutcome> {
    await ledger.reschedule(entry.key, entry.token, { dueAt: now() + waitMs });
    return outcome;
  }

  /** Polls one entry and acts on the answer; every path ends its lease (settle, reschedule or abandon). */
  async function reconcile(entry: LeasedEntry): Promise<ReconcileOutcome> {
    const { key, jobId } = entry;
    const age = now() - entry.createdAt;
    if (jobId === null) {
      if (age >= o.unattachedGraceMs) {
        return abandon(
          entry,
          'no-job-id',
          `submission ${key} got no job id within ${o.unattachedGraceMs} ms (the process died during the submit, or the submit failed without saying whether a job was made); a webhook for it is still handled`,
        );
      }
      return later(entry, o.unattachedGraceMs - age, { kind: 'waiting-for-job-id', key, jobId });
    }
    // A pause (429, outage) longer than a moment: give the entry back rather than hold its lease through it.
    const paused = pausedUntil - now();
    if (paused > gapMs) return later(entry, paused, { kind: 'rate-limited', key, jobId });
    await slot();
    let job: Awaited<ReturnType<Client['getJob']>>;
    try {
      job = await client.getJob(jobId);
      // The client checks too; a client of your own may not.
      checkPollAnswer(jobId, job);
    } catch (err) {
      return pollFailed(entry, err);
    }
    if (!isFinished(job)) {
      if (age >= o.horizonMs)
        return abandon(entry, 'horizon', `job ${jobId} is still ${String(job.status)} ${age} ms after its submission`);
      return later(entry, backoff(entry.attempts), { kind: 'pending', key, jobId });
    }
    const handled = await receiver.handlePolled(job as unknown as PolledJob);
    return afterHandling(entry, handled, age);
  }

  async function afterHandling(entry: LeasedEntry, handled: PolledOutcome, age: number): Promise<ReconcileOutcome> {
    const { key, jobId } = entry;
    switch (handled.kind) {
      case 'handled':
      case 'duplicate':
        // The receiver settles too when it was given the ledger; once more is harmless. A failed
        // settle leaves the entry leased: its next poll finds the job done and settles it then.
        await ledger.settle(jobId as string).catch((err: unknown) => {
          log.warn({ key, jobId, err }, 'jobhook reconciler: could not settle the job; its next poll will');
        });
        return { kind: handled.kind === 'handled' ? 'reconciled' : 'already-handled', key, jobId };
      case 'in-flight':
        return later(entry, Math.max(MIN_IN_FLIGHT_WAIT_MS, handled.retryAfterMs ?? 0), { kind: 'in-flight', key, jobId });
      case 'handlers-busy':
        // Load, not a failure: the receiver runs maxConcurrentHandlers handlers; nothing was claimed.
        log.warn({ key, jobId }, 'jobhook reconciler: every handler slot is taken (maxConcurrentHandlers); polled again later');
        return later(entry, backoff(entry.attempts), { kind: 'handler-failed', key, jobId, code: 'ERR_HANDLERS_BUSY' });
      case 'rejected':
        log.error({ key, jobId, err: handled.error }, 'jobhook reconciler: the poll answer is not a finished job of the documented shape');
        if (age >= o.horizonMs) return abandon(entry, 'horizon', `job ${jobId}'s poll answer is still unreadable past the horizon`);
        return later(entry, backoff(entry.attempts), { kind: 'poll-failed', key, jobId, code: 'ERR_PAYLOAD_INVALID' });
      default: {
        const code =
          handled.kind === 'store-unavailable'
            ? 'ERR_STORE_UNAVAILABLE'
            : handled.kind === 'handler-timeout'
              ? 'ERR_HANDLER_TIMEOUT'
              : 'ERR_HANDLER_FAILED';
        log.error(
          { key, jobId, err: handled.error, code },
          `jobhook reconciler: polled result not handled (${handled.kind}); retried later`,
        );
        return later(entry, backoff(entry.attempts), { kind: 'handler-failed', key, jobId, code });
      }
    }
  }

  async function pollFailed(entry: LeasedEntry, err: unknown): Promise<ReconcileOutcome> {
    const { key, jobId } = entry;
    const code = err instanceof ServiceApiError ? err.code : 'ERR_INTERNAL';
    if (code === 'ERR_NOT_FOUND') {
      return abandon(
        entry,
        'not-found',
        `the service answered 404 for job ${jobId} (it forgets finished jobs after a while, or the job is another organization's)`,
      );
    }
    if (code === 'ERR_ANSWER_TOO_LARGE') {
      return abandon(
        entry,
        'answer-too-large',
        `the poll answer for job ${jobId} is larger than the client's maxAnswerBytes; nothing was handled: fetch GET /v3/universal-ai/async/${jobId} by hand, or raise maxAnswerBytes`,
      );
    }
    if (code === 'ERR_POLL_ANSWER_MISMATCH') {
      // Not the job asked for (or two jobs named): nothing handled, nothing marked done.
      log.error(
        { key, jobId, code, err },
        'jobhook reconciler: the poll answer does not name the job asked for; not handled, polled again later',
      );
      return later(entry, backoff(entry.attempts), { kind: 'poll-failed', key, jobId, code });
    }
    if (code === 'ERR_RATE_LIMITED') {
      const wait = (err as ServiceApiError).retryAfterMs ?? o.pollBackoffMs;
      pausedUntil = Math.max(pausedUntil, now() + wait);
      log.warn({ key, jobId, retryAfterMs: wait }, 'jobhook reconciler: rate limited by the service; polling pauses');
      return later(entry, wait, { kind: 'rate-limited', key, jobId, code });
    }
    const wait = backoff(entry.attempts);
    if (err instanceof ServiceApiError && err.retryable) {
      // The service (or the way to it) is down: pause every poll, not just this job's.
      pausedUntil = Math.max(pausedUntil, now() + Math.min(wait, o.pollBackoffMs));
      log.warn({ key, jobId, code, err }, 'jobhook reconciler: poll failed; retried later');
    } else {
      // 401/403 and the like: a setup mistake the team must see; the job stays expected.
      log.error({ key, jobId, code, err }, 'jobhook reconciler: poll refused; retried later');
    }
    return later(entry, wait, { kind: 'poll-failed', key, jobId, code });
  }

  async function runOnce(): Promise<ReconcileSummary> {
    const summary: ReconcileSummary = { leased: 0, outcomes: {}, counts: undefined };
    const entries = await ledger.lease({ limit: o.batchSize, leaseMs: o.leaseMs });
    summary.leased = entries.length;
    let next = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const entry = entries[next++];
        if (entry === undefined) return;
        let outcome: ReconcileOutcome;
        try {
          outcome = await reconcile(entry);
        } catch (err) {
          // The ledger failed (or a bug): the lease runs out and the entry is due again then.
          log.error(
            { key: entry.key, jobId: entry.jobId, err },
            'jobhook reconciler: could not reconcile the entry; retried when its lease ends',
          );
          outcome = { kind: 'poll-failed', key: entry.key, jobId: entry.jobId, code: 'ERR_STORE_UNAVAILABLE' };
        }
        report(outcome, summary);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, entries.length) }, worker));
    try {
      summary.counts = await ledger.count();
      metrics?.outstanding(summary.counts);
    } catch (err) {
      log.warn({ err }, 'jobhook reconciler: could not count the ledger');
    }
    return summary;
  }

  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;

  function schedule(delayMs: number): void {
    if (!running) return;
    timer = setTimeout(() => {
      round = (async () => {
        let full = false;
        try {
          full = (await runOnce()).leased >= o.batchSize;
        } catch (err) {
          log.error({ err }, 'jobhook reconciler: round failed (ledger unavailable?); next round as usual');
        }
        const paused = Math.max(0, pausedUntil - now());
        schedule(full ? paused : Math.max(o.intervalMs, paused));
      })();
    }, delayMs);
  }

  return Object.freeze({
    start(): void {
      if (running) return;
      running = true;
      schedule(0);
    },
    async stop(): Promise<void> {
      running = false;
      clearTimeout(timer);
      await round;
    },
    runOnce,
  });
}
