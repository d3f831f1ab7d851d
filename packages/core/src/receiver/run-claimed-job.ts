import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import type { Logger } from '../log/logger.js';
import { timeoutReason, withLazySignal } from './handler-signal.js';
import type { HandlerContext } from './receiver-options.js';
import { backgroundTimeout } from './background-timeout.js';

/** How a claimed job's handler ended, as far as the HTTP answer is concerned. */
export type HandlerEnd = { kind: 'done' } | { kind: 'failed'; error: unknown } | { kind: 'timeout' };

/** What running a claimed job needs. @internal */
export interface ClaimedJob {
  event: AsyncJobCompletedEvent;
  token: string;
  store: IdempotencyStore;
  run: (event: AsyncJobCompletedEvent, context: HandlerContext<unknown>) => Promise<void>;
  context: Omit<HandlerContext<unknown>, 'signal'>;
  leaseMs: number;
  doneTtlMs: number;
  handlerTimeoutMs: number;
  log: Logger;
}

/**
 * Runs the handler of a claimed job and settles the claim: complete on success, release on failure,
 * the lease renewed every `leaseMs / 3` while the handler runs, so a slow handler never lets
 * another instance run the same job at the same time. If a renewal finds the lease gone (the store
 * was unreachable, or the process stalled, past the lease), renewals stop and `ctx.signal` aborts. Resolves as soon as the handler settles or
 * `handlerTimeoutMs` elapses, whichever is first; after a timeout the claim is settled later,
 * when the handler finally settles.
 *
 * Per request this costs two timers and no AbortController unless the handler reads `ctx.signal`:
 * it runs on every delivery, and those were a measurable part of the pipeline's overhead.
 * @internal
 */
export function runClaimedJob(job: ClaimedJob): Promise<HandlerEnd> {
  const { event, token, store, log } = job;
  const { jobId } = job.context;
  const { context, stop } = withLazySignal(job.context);

  const beatEveryMs = Math.max(10, Math.floor(job.leaseMs / 3));
  let heartbeat: NodeJS.Timeout | undefined;
  let renewing = true;
  // When the lease was last known to run out: claimed (or renewed) just before, so at most this.
  let leaseEndsAt = performance.now() + job.leaseMs;
  const leaseLost = (): void => {
    // Expired (or taken by another instance after it expired): renewing cannot bring it back, and
    // another instance may run this job now, so a handler that listens to ctx.signal stops.
    renewing = false;
    clearTimeout(heartbeat);
    log.warn({ jobId }, 'jobhook: lease lost while the handler runs (another instance may take the job); ctx.signal aborted');
    stop(new Error("jobhook: the claim's lease was lost (store unreachable or stalled past the lease); another instance may run this job"));
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

  return new Promise<HandlerEnd>((resolve) => {
    const timer = backgroundTimeout(() => {
      stop(timeoutReason(job.handlerTimeoutMs));
      resolve({ kind: 'timeout' });
    }, job.handlerTimeoutMs);

    // The handler's own end decides the answer: from then on no timeout (settling the claim may
    // take a store round trip, and a handler done in time must not be answered 503), no renewal.
    const handlerEnded = (): void => {
      clearTimeout(timer);
      renewing = false;
      clearTimeout(heartbeat);
    };
    const settle = async (): Promise<HandlerEnd> => {
      try {
        await job.run(event, context);
      } catch (error) {
        handlerEnded();
        await settleClaim(() => store.release(jobId, token), log, jobId, 'release');
        return { kind: 'failed', error };
      }
      handlerEnded();
      await settleClaim(() => store.complete(jobId, token, { ttlMs: job.doneTtlMs }), log, jobId, 'complete');
      return { kind: 'done' };
    };
    void settle().then((end) => {
      resolve(end); // no effect after a timeout answered already
    });
  });
}

/**
 * Completing or releasing can fail (store down, lease lost). The handler's work is done either way,
 * so this is logged, not answered: on complete the job was handled (a later duplicate may run it
 * again), on release the lease simply runs out.
 */
async function settleClaim(settle: () => Promise<boolean>, log: Logger, jobId: string, what: 'complete' | 'release'): Promise<void> {
  try {
    const kept = await settle();
    if (!kept) log.warn({ jobId }, `jobhook: could not ${what} the claim: its lease had expired and the job was claimed again`);
  } catch (err) {
    log.error({ jobId, err }, `jobhook: could not ${what} the claim (store unavailable)`);
  }
}
