import type { CanonicalProfile } from '../canonical/profiles.js';
import { JobhookError } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import { parseIsoInstant } from '../events/iso-instant.js';
import { afterTurn, type SameTurn } from '../internal/same-turn.js';
import type { Logger } from '../log/logger.js';
import type { RequestHeaders } from '../http/request-headers.js';

export { DEFAULT_CLOCK_SKEW_MS } from '../events/clock-skew.js';

/**
 * Default of `maxEventAgeMs`: 6 hours. The service gives one delivery at most 4 attempts of 30 s
 * each with backoffs of at most 30 s between them (spec 6.4 and 8), so its last retry comes about
 * 3.5 minutes after its first attempt; the rest (about 100 times that) is the margin for a first
 * attempt that leaves late, a backlog at the service. Hours, not days: a captured delivery can be
 * replayed only inside the window, and a memory store forgets its done marks when it restarts.
 * A late first delivery past it is refused (400 `ERR_EVENT_TOO_OLD`) and never retried: poll that
 * job, or admit it with `acceptLateEvent`.
 */
export const DEFAULT_MAX_EVENT_AGE_MS = 6 * 60 * 60_000;

/** What `acceptLateEvent` gets besides the event. */
export interface LateEventContext {
  /** The event's `job_id` in lower case, as the store keys it. */
  jobId: string;
  /** How long ago the event's signed `finished_at` lies (ms); more than `maxEventAgeMs + clockSkewMs`. */
  ageMs: number;
  /** The receiver's window. */
  maxEventAgeMs: number;
  /** The canonical profile the signature matched. */
  profile: CanonicalProfile;
  /** Id of the key that verified (SHA-256 of its SPKI DER, hex). */
  keyId: string;
  /** The request headers, as the adapter gave them. */
  headers: RequestHeaders;
  /** The receiver's logger. */
  log: Logger;
}

/**
 * Decides whether a verified event older than the replay window is handled anyway: `true` (or a
 * promise of it) admits it to the claim and the handler, anything else refuses it with 400
 * `ERR_EVENT_TOO_OLD`; a throw or a rejection answers 500 `ERR_LATE_EVENT_RULE_FAILED` (the
 * sender retries). Runs only for events past the window, so it costs nothing to fresh deliveries.
 *
 * @example
 * ```ts
 * // Admit the jobs this team submitted and has not handled yet, whatever their age.
 * acceptLateEvent: (event, { jobId }) => ledger.isAwaiting(jobId),
 * ```
 */
export type LateEventRule = (event: AsyncJobCompletedEvent, context: LateEventContext) => boolean | Promise<boolean>;

/** The limits of the replay window, as the receiver resolved them. @internal */
export interface EventAgeLimit {
  maxEventAgeMs: number;
  clockSkewMs: number;
  /** The rule that may admit an event past the window; undefined: none is. */
  acceptLateEvent: LateEventRule | undefined;
}

/** What the age check needs of the request besides the event. @internal */
export type EventAgeRequest = Omit<LateEventContext, 'ageMs' | 'maxEventAgeMs'>;

/**
 * Refuses a verified event whose signed `finished_at` lies more than `maxEventAgeMs + clockSkewMs`
 * before `now`, unless `acceptLateEvent` admits it: a captured delivery replayed after its `job_id`
 * may have left the store. The refusal is 4xx, so the sender does not retry it. `undefined` lets the
 * event on. Synchronous unless the rule runs, so fresh deliveries wait on no promise.
 * `event.finished_at` is that of an event `validateEvent` accepted, so an ISO 8601 instant;
 * `finishedMs` is the instant it names, when the caller read it already (`checkEventShape`).
 * @internal
 */
export function checkEventAge(
  event: AsyncJobCompletedEvent,
  request: EventAgeRequest,
  now: number,
  limit: EventAgeLimit,
  finishedMs: number | undefined = parseIsoInstant(event.finished_at),
): SameTurn<JobhookError | undefined> {
  const finishedAt = event.finished_at;
  const finished = finishedMs;
  if (finished === undefined) throw new JobhookError('ERR_INTERNAL', 'checkEventAge: finished_at was not checked by validateEvent');
  const ageMs = now - finished;
  const { maxEventAgeMs, acceptLateEvent } = limit;
  if (ageMs <= maxEventAgeMs + limit.clockSkewMs) return undefined;
  const tooOld = new JobhookError(
    'ERR_EVENT_TOO_OLD',
    `the event finished ${Math.round(ageMs / 1000)} s ago; events older than ${Math.round(maxEventAgeMs / 1000)} s are refused as replays`,
    { detail: { finishedAt, ageMs, maxEventAgeMs } },
  );
  if (acceptLateEvent === undefined) return tooOld;
  const context: LateEventContext = { ...request, ageMs, maxEventAgeMs };
  const ruleFailed = (err: unknown): JobhookError =>
    new JobhookError('ERR_LATE_EVENT_RULE_FAILED', `acceptLateEvent failed for job ${request.jobId}; retry later`, { cause: err });
  const decide = (admitted: unknown): JobhookError | undefined => {
    if (admitted !== true) return tooOld;
    request.log.info({ jobId: request.jobId, ageMs, maxEventAgeMs }, 'jobhook: acceptLateEvent admitted an event older than maxEventAgeMs');
    return undefined;
  };
  let verdict: unknown;
  try {
    verdict = acceptLateEvent(event, context);
  } catch (err) {
    return ruleFailed(err);
  }
  return afterTurn(verdict, decide, ruleFailed);
}
