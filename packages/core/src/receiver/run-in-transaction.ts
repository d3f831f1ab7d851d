import { JobhookError } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import type { TransactionalStore } from '../store/idempotency-store.js';
import { JobContext, timeoutReason } from './job-context.js';
import type { RunHandlers } from './run-claimed-job.js';
import type { JobEnd } from './job-end.js';
import { backgroundTimeout } from './background-timeout.js';

/** What running a job in a store transaction needs. @internal */
export interface TransactionJob {
  event: AsyncJobCompletedEvent;
  store: TransactionalStore;
  run: RunHandlers;
  /** The handler's context; its `db` is set to the transaction once the store opens it. */
  context: JobContext;
  doneTtlMs: number;
  handlerTimeoutMs: number;
}

/**
 * Runs the handler inside the store's transaction (`ctx.db`), the done mark written in the same
 * transaction. The transaction is the lease, so there is no heartbeat. Resolves when the transaction
 * ends or `handlerTimeoutMs` elapses, whichever is first (then the sender is told to retry: the
 * transaction stays open until the handler settles, and a retry meanwhile finds the job in flight).
 * @throws whatever the store throws (`ERR_STORE_UNAVAILABLE`): nothing was committed then.
 * @internal
 */
export function runInTransaction(job: TransactionJob): Promise<JobEnd> {
  const { event, store, context } = job;
  // Set when the store enters the work: a timeout before it is the store's, not the handler's.
  let entered = false;
  let timeoutError: Error | undefined;
  const ended = store
    .runInTransaction(context.jobId, { doneTtlMs: job.doneTtlMs }, async (db) => {
      // The sender was already told the store failed: the transaction rolls back, nothing runs.
      if (timeoutError !== undefined) throw timeoutError;
      entered = true;
      context.db = db;
      await job.run(event, context);
    })
    .then((result): JobEnd => {
      switch (result.state) {
        case 'committed':
          return { kind: 'done' };
        case 'done':
          return { kind: 'duplicate' };
        case 'in-flight':
          return { kind: 'in-flight', retryAfterMs: result.retryAfterMs };
        case 'rolled-back':
          return { kind: 'failed', error: result.error };
      }
    });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<JobEnd>((resolve, reject) => {
    timer = backgroundTimeout(() => {
      timeoutError = timeoutReason(job.handlerTimeoutMs);
      if (!entered) {
        const message = `the idempotency store did not start job ${context.jobId} in ${job.handlerTimeoutMs} ms`;
        reject(new JobhookError('ERR_STORE_UNAVAILABLE', message, { cause: timeoutError }));
        return;
      }
      JobContext.stop(context, timeoutError);
      resolve({ kind: 'timeout' });
    }, job.handlerTimeoutMs);
  });
  return Promise.race([ended.finally(() => clearTimeout(timer)), timedOut]);
}
