import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import type { Logger } from './logger.js';
import type { HandlerContext } from './receiver-options.js';

/** How a claimed job's handler ended, as far as the HTTP answer is concerned. */
export type HandlerEnd = { kind: 'done' } | { kind: 'failed'; error: unknown } | { kind: 'timeout' };

/** What running a claimed job needs. @internal */
export interface ClaimedJob {
  event: AsyncJobCompletedEvent;
  token: string;
  store: IdempotencyStore;
  run: (event: AsyncJobCompletedEvent, context: HandlerContext) => Promise<void>;
  context: Omit<HandlerContext, 'signal'>;
  leaseMs: number;
  doneTtlMs: number;
  handlerTimeoutMs: number;
  log: Logger;
}

/**
 * Runs the handler of a claimed job and settles the claim: complete on success, release on failure,
 * the lease renewed every `leaseMs / 3` while the handler runs, so a slow handler never lets
 * another instance run the same job at the same time. Resolves as soon as the handler settles or
 * `handlerTimeoutMs` elapses, whichever is first; after a timeout the claim is settled later,
 * when the handler finally settles.
 * @internal
 */
export function runClaimedJob(job: ClaimedJob): Promise<HandlerEnd> {
  const { event, token, store, log } = job;
  const jobId = event.job_id;
  const abort = new AbortController();
  const heartbeat = setInterval(() => {
    store.extend(jobId, token, { leaseMs: job.leaseMs }).then(
      (kept) => {
        if (!kept) log.warn({ jobId }, 'jobhook: lease lost while the handler runs (another instance may take the job)');
      },
      (err: unknown) => log.warn({ jobId, err }, 'jobhook: could not renew the lease'),
    );
  }, Math.max(10, Math.floor(job.leaseMs / 3)));
  heartbeat.unref();

  const settled = (async (): Promise<HandlerEnd> => {
    try {
      await job.run(event, { ...job.context, signal: abort.signal });
    } catch (error) {
      clearInterval(heartbeat);
      await settleClaim(() => store.release(jobId, token), log, jobId, 'release');
      return { kind: 'failed', error };
    }
    clearInterval(heartbeat);
    await settleClaim(() => store.complete(jobId, token, { ttlMs: job.doneTtlMs }), log, jobId, 'complete');
    return { kind: 'done' };
  })();

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HandlerEnd>((resolve) => {
    timer = setTimeout(() => {
      abort.abort(new Error(`handler exceeded ${job.handlerTimeoutMs} ms`));
      resolve({ kind: 'timeout' });
    }, job.handlerTimeoutMs);
    timer.unref();
  });
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Completing or releasing can fail (store down, lease lost). The handler's work is done either way,
 * so this is logged, not answered: on complete the job was handled (a later duplicate may run it
 * again), on release the lease simply runs out.
 */
async function settleClaim(
  settle: () => Promise<boolean>,
  log: Logger,
  jobId: string,
  what: 'complete' | 'release',
): Promise<void> {
  try {
    const kept = await settle();
    if (!kept) log.warn({ jobId }, `jobhook: could not ${what} the claim: its lease had expired and the job was claimed again`);
  } catch (err) {
    log.error({ jobId, err }, `jobhook: could not ${what} the claim (store unavailable)`);
  }
}
