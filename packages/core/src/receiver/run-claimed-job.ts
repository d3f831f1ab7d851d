import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import { afterTurn, isPending, type SameTurn } from '../internal/same-turn.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import type { StoreClaims } from '../store/store-claims.js';
import type { Logger } from '../log/logger.js';
import { JobContext, timeoutReason } from './job-context.js';
import { backgroundTimeout } from './background-timeout.js';
import { DONE, type JobEnd } from './job-end.js';

/** The handlers of a receiver: in this turn when they all returned without a promise, else the promise of their end. @internal */
export type RunHandlers = (event: AsyncJobCompletedEvent, context: JobContext) => SameTurn<void>;

/** What running a claimed job needs. @internal */
export interface ClaimedJob {
  event: AsyncJobCompletedEvent;
  token: string;
  /** The store, for the lease's renewals. */
  store: IdempotencyStore;
  /** The store's claims, for complete and release: in this turn on the memory store. */
  claims: StoreClaims;
  run: RunHandlers;
  context: JobContext;
  leaseMs: number;
  doneTtlMs: number;
  handlerTimeoutMs: number;
  log: Logger;
}

/**
 * Runs the handler of a claimed job and settles the claim: complete on success, release on failure.
 * A handler that returns without a promise has run to its end in this turn: no timer, no promise,
 * and with a store of same-turn claims the answer is known at once. A handler with work pending gets
 * the lease renewed every `leaseMs / 3` while it runs, so a slow handler never lets another
 * instance run the same job at the same time; if a renewal finds the lease gone (the store was
 * unreachable, or the process stalled, past the lease), renewals stop and `ctx.signal` aborts. Its
 * end resolves as soon as the handler settles or `handlerTimeoutMs` elapses, whichever is first;
 * after a timeout the claim is settled later, when the handler finally settles.
 * @internal
 */
export function runClaimedJob(job: ClaimedJob): SameTurn<JobEnd> {
  let pending: SameTurn<void>;
  try {
    pending = job.run(job.event, job.context);
  } catch (error) {
    return settle(job, 'release', { kind: 'failed', error });
  }
  if (!isPending(pending)) return settle(job, 'complete', DONE);
  return watch(job, pending);
}

/** A handler with work pending: the lease renewed meanwhile, the answer given by its end or by `handlerTimeoutMs`. */
function watch(job: ClaimedJob, pending: Promise<void>): Promise<JobEnd> {
  const { token, store, log, context } = job;
  const { jobId } = context;
  const beatEveryMs = Math.max(10, Math.floor(job.leaseMs / 3));
  let heartbeat: ReturnType<typeof setTimeout> | undefined;
  let renewing = true;
  // When the lease was last known to run out: claimed (or renewed) just before, so at most this.
  let leaseEndsAt = performance.now() + job.leaseMs;
  const leaseLost = (): void => {
    // Expired (or taken by another instance after it expired): renewing cannot bring it back, and
    // another instance may run this job now, so a handler that listens to ctx.signal stops.
    renewing = false;
    clearTimeout(heartbeat);
    log.warn({ jobId }, 'jobhook: lease lost while the handler runs (another instance may take the job); ctx.signal aborted');
    JobContext.stop(
      context,
      new Error("jobhook: the claim's lease was lost (store unreachable or stalled past the lease); another instance may run this job"),
    );
  };
  const beat = (): void => {
    const sentAt = performance.now();
    store.extend(jobId, token, { leaseMs: job.leaseMs }).then(
      (kept) => {
        if (!renewing) return;
        if (kept) leaseEndsAt = sentAt + job.leaseMs;
        else leaseLost();
      },
      (err: unknown) => {
        if (!renewing) return;
        log.warn({ jobId, err }, 'jobhook: could not renew the lease');
        // The store cannot say, but the clock can: no renewal got through before the lease ran out.
        if (performance.now() > leaseEndsAt) leaseLost();
      },
    );
    if (renewing) heartbeat = backgroundTimeout(beat, beatEveryMs);
  };
  heartbeat = backgroundTimeout(beat, beatEveryMs);

  return new Promise<JobEnd>((resolve) => {
    const timer = backgroundTimeout(() => {
      JobContext.stop(context, timeoutReason(job.handlerTimeoutMs));
      resolve({ kind: 'timeout' });
    }, job.handlerTimeoutMs);

    // The handler's own end decides the answer: from then on no timeout (settling the claim may
    // take a store round trip, and a handler done in time must not be answered 503), no renewal.
    const handlerEnded = (): void => {
      clearTimeout(timer);
      renewing = false;
      clearTimeout(heartbeat);
    };
    pending
      .then(
        () => {
          handlerEnded();
          return settle(job, 'complete', DONE);
        },
        (error: unknown) => {
          handlerEnded();
          return settle(job, 'release', { kind: 'failed', error });
        },
      )
      .then(resolve); // no effect after a timeout answered already
  });
}

/**
 * Completing or releasing can fail (store down, lease lost). The handler's work is done either way,
 * so this is logged, not answered: on complete the job was handled (a later duplicate may run it
 * again), on release the lease simply runs out. On the memory store, `end` comes back in this turn.
 */
function settle(job: ClaimedJob, what: 'complete' | 'release', end: JobEnd): SameTurn<JobEnd> {
  const { claims, token, log } = job;
  const { jobId } = job.context;
  let settled: SameTurn<boolean>;
  try {
    // A store of your own making may throw rather than reject.
    settled = what === 'complete' ? claims.complete(jobId, token, job.doneTtlMs) : claims.release(jobId, token);
  } catch (err) {
    unavailable(log, jobId, what, err);
    return end;
  }
  return afterTurn(
    settled,
    (kept) => {
      if (!kept) unkept(log, jobId, what);
      return end;
    },
    (err: unknown) => {
      unavailable(log, jobId, what, err);
      return end;
    },
  );
}

function unkept(log: Logger, jobId: string, what: 'complete' | 'release'): void {
  log.warn({ jobId }, `jobhook: could not ${what} the claim: its lease had expired and the job was claimed again`);
}

function unavailable(log: Logger, jobId: string, what: 'complete' | 'release', err: unknown): void {
  log.error({ jobId, err }, `jobhook: could not ${what} the claim (store unavailable)`);
}
