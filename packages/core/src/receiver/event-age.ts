import { JobhookError } from '../errors.js';
import { parseIsoInstant } from '../events/iso-instant.js';

/** Default of `clockSkewMs`: 5 minutes, what NTP-synced hosts stay well within. */
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;

/** The limits of the replay window, as the receiver resolved them. @internal */
export interface EventAgeLimit {
  maxEventAgeMs: number;
  clockSkewMs: number;
}

/**
 * Refuses a verified event whose signed `finished_at` lies more than `maxEventAgeMs + clockSkewMs`
 * before `now`: a captured delivery replayed after its `job_id` may have left the store. The error
 * is 4xx, so the sender does not retry it. `finishedAt` is the `finished_at` of an event
 * `validateEvent` accepted, so an ISO 8601 instant whatever the window.
 * @internal
 */
export function checkEventAge(finishedAt: string, now: number, limit: EventAgeLimit): JobhookError | undefined {
  const finished = parseIsoInstant(finishedAt);
  if (finished === undefined) throw new JobhookError('ERR_INTERNAL', 'checkEventAge: finished_at was not checked by validateEvent');
  const ageMs = now - finished;
  if (ageMs <= limit.maxEventAgeMs + limit.clockSkewMs) return undefined;
  return new JobhookError(
    'ERR_EVENT_TOO_OLD',
    `the event finished ${Math.round(ageMs / 1000)} s ago; events older than ${Math.round(limit.maxEventAgeMs / 1000)} s are refused as replays`,
    { detail: { finishedAt, ageMs, maxEventAgeMs: limit.maxEventAgeMs } },
  );
}
