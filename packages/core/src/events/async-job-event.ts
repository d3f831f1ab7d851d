import { JobhookError } from '../errors.js';
import type { JsonObject, JsonValue } from '../canonical/to-value.js';
import { parseIsoInstant } from './iso-instant.js';

/** Fields every `async_job_completed` event carries (spec §6.2). */
interface EventBase {
  /** Always `async_job_completed`. */
  event: 'async_job_completed';
  /** The job's UUID; the idempotency key. */
  job_id: string;
  /** Feature name, e.g. `ocr`. */
  feature: string;
  /** Subfeature name, e.g. `ocr_async`. */
  subfeature: string;
  /** Provider that produced the result. */
  provider: string;
  /** Provider-specific model, if any. */
  model: string | null;
  /** Job creation instant, ISO 8601 (a string; nothing in jobhook reads it, so its format is not checked). */
  created_at: string;
  /** Job finish instant, ISO 8601 (checked: an instant {@link validateEvent} can read; the replay window reads it). */
  finished_at: string;
  /** Echo of the submission's `user_webhook_parameters`; absent when it had none. */
  user_parameters?: JsonObject;
  /** Raw provider response; only when the submission asked for it. */
  original_response?: JsonValue;
  /** Cost of the job, where the service reports it (a decimal string; a number is accepted too). */
  cost?: string | number;
  /** Fields the spec does not list are kept. */
  [field: string]: unknown;
}

/** A job that finished with a result. */
export interface SuccessEvent extends EventBase {
  status: 'success';
  /** The normalized result. */
  output: JsonObject;
  /** Some service docs show `error: null` on success. */
  error?: null;
}

/** Failure details of a job. */
export interface JobError {
  message: string;
  /** Provider or processing error code, where given. */
  error_code?: string;
  [field: string]: unknown;
}

/** A job that failed. */
export interface FailEvent extends EventBase {
  status: 'fail';
  error: JobError;
  /** Some service docs show `output: null` on failure. */
  output?: null;
}

/**
 * The one event the service sends: `async_job_completed`, a union on `status`.
 *
 * Its values are JSON-safe as the receiver and `constructEvent` hand them over: integers beyond
 * ±(2^53−1) are strings of their exact digits (option `bigIntegers: 'bigint'` keeps them `bigint`),
 * so `JSON.stringify(event)` never throws and loses no digit. Floats are numbers (`1.0` is `1`);
 * `NaN` and `±Infinity`, which Python may write, stay numbers and `JSON.stringify` writes them as
 * `null`. The value types say `JsonValue`, which admits `bigint` too: the same types serve both
 * forms and {@link validateEvent} over a `createVerifier` payload.
 */
export type AsyncJobCompletedEvent = SuccessEvent | FailEvent;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function invalid(path: string, expected: string, value: unknown): never {
  const got = value === undefined ? 'nothing' : value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  throw new JobhookError('ERR_PAYLOAD_INVALID', `payload.${path} must be ${expected}, got ${got}`, {
    detail: { path },
  });
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function requireString(p: JsonObject, field: string): void {
  if (typeof p[field] !== 'string') invalid(field, 'a string', p[field]);
}

/** An ISO 8601 instant, as the receiver's replay window reads it: the same event is valid or not whatever the options. */
function requireInstant(p: JsonObject, field: string): number {
  const value = p[field];
  if (typeof value !== 'string') invalid(field, 'an ISO 8601 timestamp string', value);
  const instant = parseIsoInstant(value);
  if (instant === undefined) {
    throw new JobhookError('ERR_PAYLOAD_INVALID', `payload.${field} must be an ISO 8601 timestamp`, { detail: { path: field } });
  }
  return instant;
}

const STRING_FIELDS = ['feature', 'subfeature', 'provider', 'created_at'] as const;

/**
 * Checks a verified payload against the `async_job_completed` shape of spec §6.2 and returns it typed.
 * Checks what a handler relies on; fields the spec does not list are kept as they are.
 * `finished_at` must be an ISO 8601 instant (`YYYY-MM-DD`, `T` or a space, `hh:mm[:ss[.fraction]]`,
 * an optional `Z` or `±hh[:mm]` offset; none means UTC), a real date: the replay window reads it,
 * and a value it could not read would make the same event valid or not by options. `created_at`
 * only has to be a string: nothing reads it, and refusing a signed event (4xx, never retried) over
 * a field nobody uses would lose a delivery.
 *
 * @throws JobhookError `ERR_PAYLOAD_INVALID` (400), its message and `detail.path` naming the field.
 */
export function validateEvent(payload: JsonObject): AsyncJobCompletedEvent {
  checkEventShape(payload);
  return payload as AsyncJobCompletedEvent;
}

/**
 * The checks of {@link validateEvent}; answers the instant `finished_at` names (ms since the epoch),
 * read once, so the receiver's replay window does not parse it again.
 * @throws JobhookError `ERR_PAYLOAD_INVALID` (400), as {@link validateEvent}.
 * @internal
 */
export function checkEventShape(payload: JsonObject): number {
  if (payload['event'] !== 'async_job_completed') invalid('event', '"async_job_completed"', payload['event']);
  const jobId = payload['job_id'];
  if (typeof jobId !== 'string' || !UUID.test(jobId)) invalid('job_id', 'a UUID string', jobId);
  for (const field of STRING_FIELDS) requireString(payload, field);
  const finishedMs = requireInstant(payload, 'finished_at');
  const model = payload['model'];
  if (model !== null && typeof model !== 'string') invalid('model', 'a string or null', model);
  const status = payload['status'];
  if (status === 'success') {
    if (!isObject(payload['output'])) invalid('output', 'an object when status is "success"', payload['output']);
    if (payload['error'] !== undefined && payload['error'] !== null) {
      invalid('error', 'absent or null when status is "success"', payload['error']);
    }
  } else if (status === 'fail') {
    const error = payload['error'];
    if (!isObject(error)) invalid('error', 'an object when status is "fail"', error);
    if (typeof error['message'] !== 'string') invalid('error.message', 'a string', error['message']);
    if (error['error_code'] !== undefined && typeof error['error_code'] !== 'string') {
      invalid('error.error_code', 'a string', error['error_code']);
    }
    if (payload['output'] !== undefined && payload['output'] !== null) {
      invalid('output', 'absent or null when status is "fail"', payload['output']);
    }
  } else {
    invalid('status', '"success" or "fail"', status);
  }
  if (payload['user_parameters'] !== undefined && !isObject(payload['user_parameters'])) {
    invalid('user_parameters', 'an object', payload['user_parameters']);
  }
  const cost = payload['cost'];
  if (cost !== undefined && typeof cost !== 'string' && typeof cost !== 'number') invalid('cost', 'a string', cost);
  return finishedMs;
}
