import type { AsyncJobCompletedEvent, FailEvent, SuccessEvent } from '../events/async-job-event.js';
import type { JobLedger } from '../ledger/job-ledger.js';
import type { Logger } from '../log/logger.js';
import { isTransactionalStore, syncClaimsOf, type ClaimResult, type IdempotencyStore } from '../store/idempotency-store.js';
import type { DeliveryTracing } from './delivery-tracing.js';
import type { HandlerSlots } from './handler-slots.js';
import { isThenable } from './is-thenable.js';
import type { JobContext } from './job-context.js';
import { DUPLICATE, HANDLERS_BUSY, type JobEnd } from './job-end.js';
import type { HandlerContext, ReceiverOptions } from './receiver-options.js';
import { runClaimedJob, type RunHandlers } from './run-claimed-job.js';
import { runInTransaction } from './run-in-transaction.js';

/** What the job stage needs of its receiver. @internal */
export interface JobRunnerSetup<Db> {
  readonly handlers: Pick<ReceiverOptions<Db>, 'onSuccess' | 'onFail' | 'onEvent'>;
  readonly store: IdempotencyStore;
  readonly ledger: Pick<JobLedger, 'settle'> | undefined;
  readonly slots: HandlerSlots;
  readonly tracing: DeliveryTracing;
  readonly leaseMs: number;
  readonly doneTtlMs: number;
  readonly handlerTimeoutMs: number;
  readonly log: Logger;
}

/** Runs one verified job: `(event, context) => JobEnd`, in this turn when the store and the handler allow. @internal */
export type RunJob = (event: AsyncJobCompletedEvent, context: JobContext) => JobEnd | Promise<JobEnd>;

/**
 * The job stage, as a webhook and a poll share it: a handler slot (or busy at once), then the claim
 * and the handlers in the store's transaction, or claim → handler → complete | release; a handled or
 * duplicate job is then settled in the ledger. A promise only when the store or a handler is pending
 * (the memory store and a handler that returns no promise run in the caller's turn).
 * The returned function throws (or its promise rejects with) what the store throws.
 * @internal
 */
export function createJobRunner<Db>(setup: JobRunnerSetup<Db>): RunJob {
  const { store, ledger, slots, tracing, leaseMs, doneTtlMs, handlerTimeoutMs, log } = setup;
  const { onSuccess, onFail, onEvent } = setup.handlers;
  const claims = syncClaimsOf(store);
  // The store's own transaction when it has one (PostgreSQL): the handler's writes and the done mark commit together.
  const transactional = isTransactionalStore(store) ? store : undefined;

  /**
   * onSuccess / onFail, then onEvent. Nothing is returned when every handler returned without a
   * promise; otherwise the promise of their end. `db` is the store's transaction (a
   * TransactionalStore<Db>), or undefined otherwise.
   */
  function runHandlers(event: AsyncJobCompletedEvent, context: JobContext): void | Promise<void> {
    const typed = context as unknown as HandlerContext<Db>;
    const first =
      event.status === 'success'
        ? onSuccess === undefined
          ? undefined
          : onSuccess(event as SuccessEvent, typed)
        : onFail === undefined
          ? undefined
          : onFail(event as FailEvent, typed);
    if (isThenable(first)) return Promise.resolve(first).then(() => (onEvent === undefined ? undefined : settled(onEvent(event, typed))));
    if (onEvent === undefined) return undefined;
    const last = onEvent(event, typed);
    return isThenable(last) ? settled(last) : undefined;
  }

  /** claim → handler → complete | release (stores without transactions). */
  function claimAndRun(event: AsyncJobCompletedEvent, context: JobContext, run: RunHandlers): JobEnd | Promise<JobEnd> {
    if (claims !== undefined) return afterClaim(event, context, run, claims.claim(context.jobId, leaseMs));
    return Promise.resolve(store.claim(context.jobId, { leaseMs })).then((claim) => afterClaim(event, context, run, claim));
  }

  function afterClaim(event: AsyncJobCompletedEvent, context: JobContext, run: RunHandlers, claim: ClaimResult): JobEnd | Promise<JobEnd> {
    if (claim.state === 'done') return DUPLICATE;
    if (claim.state === 'in-flight') return { kind: 'in-flight', retryAfterMs: claim.retryAfterMs };
    return runClaimedJob({ event, token: claim.token, store, claims, run, context, leaseMs, doneTtlMs, handlerTimeoutMs, log });
  }

  function settleInLedger(end: JobEnd, jobId: string): JobEnd | Promise<JobEnd> {
    if (ledger === undefined || (end.kind !== 'done' && end.kind !== 'duplicate')) return end;
    return Promise.resolve()
      .then(() => ledger.settle(jobId))
      .then(
        () => end,
        (err: unknown) => {
          log.warn({ jobId, err }, 'jobhook: could not settle the job in the ledger; the reconciler will poll it once and settle it');
          return end;
        },
      );
  }

  return function runJob(event, context) {
    // Backpressure: a handler slot before the claim, or busy at once (no lease taken, nothing queued).
    const slot = slots.tryAcquire();
    if (slot === undefined) return HANDLERS_BUSY;
    const run = slot.track(tracing.handler(runHandlers));
    let end: JobEnd | Promise<JobEnd>;
    try {
      end =
        transactional === undefined
          ? claimAndRun(event, context, run)
          : runInTransaction({ event, store: transactional, run, context, doneTtlMs, handlerTimeoutMs });
    } catch (err) {
      slot.done();
      throw err;
    }
    // The slot comes back once the pipeline has its end, or when a handler still running past its timeout settles.
    if (isThenable(end)) {
      end = end.then(
        (ended) => {
          slot.done();
          return ended;
        },
        (err: unknown) => {
          slot.done();
          throw err;
        },
      );
    } else {
      slot.done();
    }
    if (ledger === undefined) return end;
    return isThenable(end) ? end.then((ended) => settleInLedger(ended, context.jobId)) : settleInLedger(end, context.jobId);
  };
}

/** A handler's promise, its value dropped. */
function settled(value: unknown): Promise<void> | undefined {
  return isThenable(value) ? Promise.resolve(value).then(() => undefined) : undefined;
}
