import type { AsyncJobCompletedEvent, HandlerContext, IdempotencyStore } from '@jobhook/core';
import { checkJobId, optionError, withoutTag } from '@jobhook/core/internal';
import { abortableSleep } from './abortable-sleep.js';
import type { JobResult } from './job-result.js';
import type { FinishedJob } from './job-types.js';
import {
  resolveResultWaiterOptions,
  resolveWaitOptions,
  type ResultWaiterOptions,
  type WaitOptions,
} from './options/result-waiter-options.js';
import { checkPollAnswer } from './poll-answer.js';
import { ServiceApiError } from './service-api-error.js';

/** Waits for job results by webhook, with polling as the fallback, handling each job once. */
export interface ResultWaiter {
  /** The idempotency store shared by both paths; give it to the receiver. */
  readonly store: IdempotencyStore;
  /**
   * The receiver's handler: `createReceiver({ store: waiter.store, onEvent: waiter.handleEvent })`.
   * The receiver has already verified the event and claimed its `job_id` in the shared store; this
   * runs `onResult` and resolves the waits for that job. Call it only from such a receiver.
   */
  handleEvent(event: AsyncJobCompletedEvent, context?: HandlerContext): Promise<void>;
  /**
   * Resolves with the job's result: the first of its webhook (through `handleEvent`) and polling
   * (after `webhookGraceMs` when `webhooks` is set, else at once). A result seen recently by
   * `handleEvent` resolves at once, so the webhook may arrive before the call.
   * A poll answer is handed to `onResult` only when it names `jobId` (compared in lower case, as
   * the receiver keys jobs) and names it once; else the wait rejects, nothing is handled and
   * nothing is marked done.
   * @throws ServiceApiError `ERR_TIMEOUT` after `timeoutMs`; the poll's errors (`ERR_UNAUTHORIZED`,
   * `ERR_NOT_FOUND`, `ERR_POLL_ANSWER_MISMATCH`, `ERR_ANSWER_TOO_LARGE` past the client's
   * `maxAnswerBytes`, ...); what `onResult` threw on the poll path. Rejects with `signal.reason` on abort.
   */
  waitForResult(jobId: string, options?: WaitOptions): Promise<JobResult>;
  /** Rejects the pending waits (AbortError) and closes the store if the waiter created it. */
  close(): Promise<void>;
}

/** How many results `handleEvent` keeps for waits that start after their webhook arrived. */
const REMEMBERED_RESULTS = 1_000;

interface PendingWait {
  resolve(result: JobResult): void;
}

/**
 * Creates a {@link ResultWaiter}: the webhook path (a receiver calling `handleEvent`) and the
 * polling fallback mark each job handled in one idempotency store, keyed by `job_id` as the
 * receiver keys it, so `onResult` runs exactly once per job whichever path wins, and a webhook
 * that arrives after polling handled the job is answered as a duplicate by the receiver.
 *
 * @example
 * ```ts
 * const waiter = createResultWaiter({ client, webhooks: true, onResult: (r) => save(r.jobId, r.output) });
 * const receiver = createReceiver({ publicKeys, store: waiter.store, onEvent: waiter.handleEvent });
 * // … serve receiver on https://me.example.com/hooks …
 * const { job_id } = await client.submitJob({ model, input, webhook_receiver: 'https://me.example.com/hooks' });
 * const result = await waiter.waitForResult(job_id);
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when an option is wrong.
 */
export function createResultWaiter(options: ResultWaiterOptions): ResultWaiter {
  const o = resolveResultWaiterOptions(options);
  const { client, store, onResult, logger: log } = o;

  const pending = new Map<string, Set<PendingWait>>();
  const recent = new Map<string, JobResult>();
  const stops = new Set<AbortController>();
  let closed = false;

  function remember(result: JobResult): void {
    recent.delete(result.jobId);
    recent.set(result.jobId, result);
    if (recent.size > REMEMBERED_RESULTS) recent.delete(recent.keys().next().value as string);
    for (const wait of pending.get(result.jobId) ?? []) wait.resolve(result);
  }

  async function runOnResult(result: JobResult): Promise<void> {
    if (onResult !== undefined) await onResult(result);
  }

  /**
   * Poll path: claim the job in the shared store; only the claim holder runs onResult.
   * @param jobId the job asked for, in lower case.
   */
  async function settleFromPoll(jobId: string, job: FinishedJob, signal: AbortSignal): Promise<JobResult> {
    // The client checks too; a client of your own may not. Before the claim: nothing is marked.
    checkPollAnswer(jobId, job);
    for (;;) {
      const known = recent.get(jobId);
      if (known !== undefined) return known;
      const claim = await store.claim(jobId, { leaseMs: o.leaseMs });
      if (claim.state === 'done') return recent.get(jobId) ?? fromJob(jobId, job);
      if (claim.state === 'in-flight') {
        // The webhook is being handled right now: its end resolves the wait; if its handler
        // fails, the claim is released and the next round here takes the job.
        await abortableSleep(Math.min(claim.retryAfterMs, o.pollIntervalMs), signal);
        continue;
      }
      const result = fromJob(jobId, job);
      const renew = setInterval(
        () => {
          store.extend(jobId, claim.token, { leaseMs: o.leaseMs }).catch(() => {});
        },
        Math.max(10, Math.floor(o.leaseMs / 3)),
      );
      try {
        await runOnResult(result);
      } catch (err) {
        clearInterval(renew);
        await store.release(jobId, claim.token).catch(() => {});
        throw err;
      }
      clearInterval(renew);
      await store.complete(jobId, claim.token, { ttlMs: o.doneTtlMs });
      remember(result);
      return result;
    }
  }

  /** A refused poll answer is a person's business even when the caller drops the rejection. */
  function logRefusedAnswer(jobId: string, err: unknown): void {
    if (!(err instanceof ServiceApiError)) return;
    if (err.code === 'ERR_POLL_ANSWER_MISMATCH') {
      log.error({ jobId, code: err.code, err }, 'jobhook result waiter: the poll answer does not name the job asked for; not handled');
    } else if (err.code === 'ERR_ANSWER_TOO_LARGE') {
      log.warn(
        { jobId, code: err.code },
        `jobhook result waiter: the poll answer is larger than the client's maxAnswerBytes; not handled: fetch GET /v3/universal-ai/async/${jobId} by hand, or raise maxAnswerBytes`,
      );
    }
  }

  return Object.freeze({
    store,

    async handleEvent(event: AsyncJobCompletedEvent): Promise<void> {
      const result = fromEvent(event);
      await runOnResult(result);
      remember(result);
    },

    async waitForResult(askedId: string, waitOptions: WaitOptions = {}): Promise<JobResult> {
      checkJobId('waitForResult', askedId);
      // The receiver's key: one job whatever the case the caller, the service or a webhook writes it in.
      const jobId = askedId.toLowerCase();
      if (closed) throw optionError('waitForResult', 'the waiter is closed');
      const {
        timeoutMs: waitTimeoutMs,
        webhookGraceMs: graceMs,
        signal,
      } = resolveWaitOptions(waitOptions, {
        timeoutMs: o.timeoutMs,
        webhookGraceMs: o.webhooks ? o.webhookGraceMs : 0,
      });
      if (signal?.aborted === true) throw signal.reason;
      const known = recent.get(jobId);
      if (known !== undefined) return known;

      const stop = new AbortController();
      stops.add(stop);
      const onAbort = (): void => stop.abort(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => {
        stop.abort(new ServiceApiError('ERR_TIMEOUT', `no result for job ${askedId} within ${waitTimeoutMs} ms`));
      }, waitTimeoutMs);
      const deadline = performance.now() + waitTimeoutMs;
      let wait: PendingWait | undefined;
      const byWebhook = new Promise<JobResult>((resolve) => {
        wait = { resolve };
        let set = pending.get(jobId);
        if (set === undefined) pending.set(jobId, (set = new Set()));
        set.add(wait);
      });
      const stopped = new Promise<never>((_resolve, reject) => {
        stop.signal.addEventListener('abort', () => reject(stop.signal.reason), { once: true });
      });
      const byPolling = (async (): Promise<JobResult> => {
        if (graceMs > 0) await abortableSleep(graceMs, stop.signal);
        try {
          const job = await client.pollJob(askedId, {
            intervalMs: o.pollIntervalMs,
            maxIntervalMs: o.maxPollIntervalMs,
            timeoutMs: Math.max(1, Math.floor(deadline - performance.now())),
            signal: stop.signal,
          });
          return await settleFromPoll(jobId, job, stop.signal);
        } catch (err) {
          logRefusedAnswer(jobId, err);
          throw err;
        }
      })();
      try {
        return await Promise.race([byWebhook, byPolling, stopped]);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        stops.delete(stop);
        const set = pending.get(jobId);
        if (set !== undefined && wait !== undefined) {
          set.delete(wait);
          if (set.size === 0) pending.delete(jobId);
        }
        // Ends the poll loop (and its sleeps) of a wait the webhook settled.
        if (!stop.signal.aborted) stop.abort();
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const stop of stops) stop.abort(new DOMException('the result waiter was closed', 'AbortError'));
      if (o.ownsStore) await store.close();
    },
  });
}

function fromEvent(event: AsyncJobCompletedEvent): JobResult {
  return {
    jobId: event.job_id.toLowerCase(),
    status: event.status,
    output: event.status === 'success' ? event.output : null,
    error: event.status === 'fail' ? event.error : null,
    source: 'webhook',
    data: event,
  };
}

/** The result of a checked poll answer; `data` is a copy without the recipient tag, as a webhook's. */
function fromJob(jobId: string, job: FinishedJob): JobResult {
  const data = { ...job } as FinishedJob & { user_parameters?: unknown };
  const params = data.user_parameters;
  if (typeof params === 'object' && params !== null) data.user_parameters = { ...params };
  withoutTag(data as unknown as AsyncJobCompletedEvent);
  return {
    jobId,
    status: job.status,
    output: job.status === 'success' ? (job.output ?? null) : null,
    error: job.status === 'fail' ? (job.error ?? null) : null,
    source: 'poll',
    data,
  };
}
