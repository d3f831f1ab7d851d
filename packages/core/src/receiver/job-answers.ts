import { JobhookError } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import { afterTurn, type SameTurn } from '../internal/same-turn.js';
import type { HandlerSlots } from './handler-slots.js';
import type { JobContext } from './job-context.js';
import type { JobEnd } from './job-end.js';
import type { RunJob } from './job-runner.js';
import type { AnswerStats, ReceiverAnswers, VerifiedDetail } from './receiver-answers.js';
import type { ReceiverResponse } from './receiver-types.js';

/** What the answer stage needs of its receiver. @internal */
export interface JobAnswerSetup {
  readonly answers: ReceiverAnswers;
  readonly stats: AnswerStats;
  readonly slots: HandlerSlots;
  readonly runJob: RunJob;
  readonly leaseMs: number;
  readonly retryAfterSeconds: number;
  readonly handlerTimeoutMs: number;
}

/** The run-and-answer stage of a verified webhook: the job's end as the answer the sender reads. @internal */
export interface JobAnswers {
  /** Claim, handler, answer: in this turn when the job ran in it. */
  run(started: number, event: AsyncJobCompletedEvent, context: JobContext, detail: VerifiedDetail): SameTurn<ReceiverResponse>;
  /** 503 `ERR_STORE_UNAVAILABLE` + `Retry-After` for a store (or binding) that failed. */
  storeFailed(started: number, err: unknown, detail: VerifiedDetail): ReceiverResponse;
}

/** @internal */
export function createJobAnswers(setup: JobAnswerSetup): JobAnswers {
  const { answers, stats, slots, runJob, leaseMs, retryAfterSeconds, handlerTimeoutMs } = setup;
  const retryAfter = Object.freeze({ 'retry-after': String(retryAfterSeconds) });

  /**
   * `Retry-After` of an in-flight answer. A live holder renews its lease every `leaseMs / 3`, so its
   * lease never has less than about two thirds left: the sender is told `retryAfterSeconds`, and its
   * few retries are not spent while a long handler runs. Less than half left means renewals stopped
   * (the holder died or stalled): the sender comes back when the lease ends and the job is free.
   */
  function inFlightRetryAfter(leaseLeftMs: number): number {
    if (!Number.isFinite(leaseLeftMs) || leaseLeftMs >= leaseMs / 2) return retryAfterSeconds;
    return Math.max(1, Math.min(retryAfterSeconds, Math.ceil(leaseLeftMs / 1000)));
  }

  function storeFailed(started: number, err: unknown, detail: VerifiedDetail): ReceiverResponse {
    stats.storeUnavailable++;
    const error =
      err instanceof JobhookError && err.code === 'ERR_STORE_UNAVAILABLE'
        ? err
        : new JobhookError('ERR_STORE_UNAVAILABLE', 'the idempotency store failed', { cause: err });
    return answers.error(started, 'store-unavailable', error, detail, retryAfter);
  }

  function answerEnd(started: number, end: JobEnd, detail: VerifiedDetail): ReceiverResponse {
    const { jobId } = detail;
    switch (end.kind) {
      case 'done':
        stats.handled++;
        return answers.ok(started, 'handled', detail);
      case 'duplicate':
        stats.duplicates++;
        return answers.ok(started, 'duplicate', detail);
      case 'in-flight': {
        stats.inFlight++;
        const error = new JobhookError('ERR_JOB_IN_FLIGHT', `job ${jobId} is being handled right now; retry later`);
        return answers.error(started, 'in-flight', error, detail, { 'retry-after': String(inFlightRetryAfter(end.retryAfterMs)) });
      }
      case 'timeout': {
        stats.handlerTimeouts++;
        const error = new JobhookError(
          'ERR_HANDLER_TIMEOUT',
          `the handler of job ${jobId} is still running after ${handlerTimeoutMs} ms; retry later`,
        );
        return answers.error(started, 'handler-timeout', error, detail, retryAfter);
      }
      case 'handlers-busy': {
        // Every handler slot taken: the sender retries, nothing was claimed.
        stats.handlersBusy++;
        const error = new JobhookError(
          'ERR_HANDLERS_BUSY',
          `the receiver is running ${slots.capacity} handlers (maxConcurrentHandlers); retry later`,
        );
        return answers.error(started, 'handlers-busy', error, detail, retryAfter);
      }
      case 'failed': {
        stats.handlerFailures++;
        // The handler's own message stays in the logs: it may hold internals the sender must not see.
        const error = new JobhookError('ERR_HANDLER_FAILED', `the handler of job ${jobId} failed; retry later`, { cause: end.error });
        return answers.error(started, 'handler-failed', error, detail);
      }
    }
  }

  return {
    storeFailed,
    run(started, event, context, detail) {
      let end: SameTurn<JobEnd>;
      try {
        end = runJob(event, context);
      } catch (err) {
        return storeFailed(started, err, detail);
      }
      return afterTurn(
        end,
        (ended) => answerEnd(started, ended, detail),
        (err: unknown) => storeFailed(started, err, detail),
      );
    },
  };
}
