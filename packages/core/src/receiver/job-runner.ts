import type { AsyncJobCompletedEvent, FailEvent, SuccessEvent } from '../events/async-job-event.js';
import type { JobLedger } from '../ledger/job-ledger.js';
import type { Logger } from '../log/logger.js';
import { afterTurn, type SameTurn } from '../internal/same-turn.js';
import { isTransactionalStore, type ClaimResult, type IdempotencyStore } from '../store/idempotency-store.js';
import { storeClaimsOf } from '../store/store-claims.js';
import type { DeliveryTracing } from './delivery-tracing.js';
import type { HandlerSlots } from './handler-slots.js';
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
export type RunJob = (event: AsyncJobCompletedEvent, context: JobContext) => SameTurn<JobEnd>;

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
  const claims = storeClaimsOf(store);
  // The store's own transaction when it has one (PostgreSQL): the handler's writes and the done mark commit together.
  const transactional = isTransactionalStore(store) ? store : undefined;

  /**
   * onSuccess / onFail, then onEvent: in this turn when every handler returned without a promise,
   * else the promise of their end. `db` is the store's transaction (a TransactionalStore<Db>), or
   * undefined otherwise.
   */
  function runHandlers(event: AsyncJobCompletedEvent, context: JobContext): SameTurn<void> {
    const typed = context as unknown as HandlerContext<Db>;
    const first = event.status === 'success' ? onSuccess?.(event as SuccessEvent, typed) : onFail?.(event as FailEvent, typed);
    return afterTurn(first, () => (onEvent === undefined ? undefined : afterTurn(onEvent(event, typed), nothing)));
  }

  /** claim → handler → complete | release (stores without transactions). */
  function claimAndRun(event: AsyncJobCompletedEvent, context: JobContext, run: RunHandlers): SameTurn<JobEnd> {
    return afterTurn(claims.claim(context.jobId, leaseMs), (claim) => afterClaim(event, context, run, claim));
  }

  function afterClaim(event: AsyncJobCompletedEvent, context: JobContext, run: RunHandlers, claim: ClaimResult): SameTurn<JobEnd> {
    if (claim.state === 'done') return DUPLICATE;
    if (claim.state === 'in-flight') return { kind: 'in-flight', retryAfterMs: claim.retryAfterMs };
    return runClaimedJob({ event, token: claim.token, store, claims, run, context, leaseMs, doneTtlMs, handlerTimeoutMs, log });
  }

  function settleInLedger(end: JobEnd, jobId: string): SameTurn<JobEnd> {
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
    let end: SameTurn<JobEnd>;
    try {
      end =
        transactional === undefined
          ? claimAndRun(event, context, run)
          : runInTransaction({ event, store: transactional, run, context, doneTtlMs, handlerTimeoutMs });
    } catch (err) {
      slot.done();
      throw err;
    }
    // The slot comes back once the pipeline has its end (or when a handler still running past its
    // timeout settles), then the job is settled in the ledger.
    return afterTurn(
      end,
      (ended) => {
        slot.done();
        return settleInLedger(ended, context.jobId);
      },
      (err: unknown) => {
        slot.done();
        throw err;
      },
    );
  };
}

/** A handler's end, its value dropped. */
const nothing = (): undefined => undefined;
