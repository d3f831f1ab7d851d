import type { BigIntegers } from '../canonical/to-value.js';
import type { CanonicalProfile } from '../canonical/profiles.js';
import type { ParseRun } from '../canonical/parse.js';
import { JobhookError } from '../errors.js';
import { checkEventShape, type AsyncJobCompletedEvent } from '../events/async-job-event.js';
import { afterTurn, type SameTurn } from '../internal/same-turn.js';
import type { Logger } from '../log/logger.js';
import type { RecipientBinding } from '../recipient/recipient-check.js';
import type { RecoveredDigest } from '../signature/recover-digest.js';
import { verifyRecovered, type VerifyResult } from '../signature/verifier.js';
import { checkEventAge, type EventAgeLimit } from './event-age.js';
import type { JobAnswers } from './job-answers.js';
import { JobContext } from './job-context.js';
import type { AnswerStats, ReceiverAnswers, VerifiedDetail } from './receiver-answers.js';
import type { ReceiverResponse, RequestHead } from './receiver-types.js';

/** What the body stage needs of its receiver. @internal */
export interface DeliveryCheckSetup {
  readonly answers: ReceiverAnswers;
  readonly stats: AnswerStats;
  readonly profiles: readonly CanonicalProfile[];
  readonly parseRun: ParseRun;
  readonly bigIntegers: BigIntegers;
  /** With `recipientSecret`: the tag's check and its nonce's binding. */
  readonly recipient: RecipientBinding | undefined;
  /** The replay window, unless `maxEventAgeMs: false`. */
  readonly eventAge: EventAgeLimit | undefined;
  readonly log: Logger;
  /** The next stage: claim, handler, answer. */
  readonly jobs: JobAnswers;
}

/** The body stage: a body in hand, against what the head stage recovered, to its answer. @internal */
export type ReceiveBody = (
  started: number,
  head: RequestHead,
  recovered: readonly RecoveredDigest[],
  body: Uint8Array,
) => SameTurn<ReceiverResponse>;

/**
 * The body stage, in its order: verification against the digests the head stage recovered
 * (authentic: the service sent these bytes), the event's shape, the recipient tag and its one job
 * (authorized: the job is this receiver's), the replay window (fresh), then the job stage. A promise
 * only when something is pending (a store's binding, `acceptLateEvent`'s promise, the job stage).
 * @internal
 */
export function createDeliveryChecks(setup: DeliveryCheckSetup): ReceiveBody {
  const { answers, stats, profiles, parseRun, bigIntegers, recipient, eventAge, log, jobs } = setup;

  /** The tag's check, whose refusal answers with the generic body while the outcome keeps the cause. */
  function afterRecipient(
    started: number,
    head: RequestHead,
    verified: VerifyResult,
    checked: AsyncJobCompletedEvent | JobhookError,
    jobId: string,
    finishedMs: number,
  ): SameTurn<ReceiverResponse> {
    if (!(checked instanceof JobhookError)) return checkAge(started, head, verified, checked, jobId, finishedMs);
    return answers.error(started, 'rejected', checked, detailOf(verified, verified.payload as AsyncJobCompletedEvent, jobId));
  }

  /** The replay window, then the job stage. */
  function checkAge(
    started: number,
    head: RequestHead,
    verified: VerifyResult,
    event: AsyncJobCompletedEvent,
    jobId: string,
    finishedMs: number,
  ): SameTurn<ReceiverResponse> {
    const { profile, keyId } = verified;
    const detail = detailOf(verified, event, jobId);
    const context = new JobContext(jobId, 'webhook', profile, keyId, head.headers, log, verified);
    if (eventAge !== undefined) {
      const age = checkEventAge(event, { jobId, profile, keyId, headers: head.headers, log }, Date.now(), eventAge, finishedMs);
      return afterTurn(age, (tooOld) =>
        tooOld === undefined ? jobs.run(started, event, context, detail) : answers.error(started, 'rejected', tooOld, detail),
      );
    }
    return jobs.run(started, event, context, detail);
  }

  return function receiveBody(started, head, recovered, body) {
    let verified: VerifyResult;
    try {
      verified = verifyRecovered(body, recovered, profiles, parseRun, bigIntegers);
    } catch (err) {
      if (err instanceof JobhookError) return answers.verifyRefusal(started, err, { method: head.method, headers: head.headers, body });
      throw err;
    }
    stats.verified++;
    let finishedMs: number;
    try {
      finishedMs = checkEventShape(verified.payload);
    } catch (err) {
      if (err instanceof JobhookError) return answers.error(started, 'rejected', err);
      throw err;
    }
    const event = verified.payload as AsyncJobCompletedEvent;
    // UUIDs name the same job in either case; the store key is the lower-case form.
    const jobId = event.job_id.toLowerCase();
    if (recipient === undefined) return checkAge(started, head, verified, event, jobId, finishedMs);
    // Signed, but is the job ours, and the tag's first job? Before the replay window and the claim, and
    // outside any transaction: a refusal never runs the handler, and a binding outlives a failed one.
    return afterTurn(
      recipient.check(event, Date.now(), jobId),
      (checked) => afterRecipient(started, head, verified, checked, jobId, finishedMs),
      (err: unknown) => jobs.storeFailed(started, err, detailOf(verified, event, jobId)),
    );
  };
}

function detailOf(verified: VerifyResult, event: AsyncJobCompletedEvent, jobId: string): VerifiedDetail {
  return { jobId, eventStatus: event.status, profile: verified.profile, keyId: verified.keyId, event };
}
