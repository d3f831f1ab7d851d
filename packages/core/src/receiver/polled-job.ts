import { JobhookError } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import type { BigIntegers } from '../canonical/to-value.js';
import { withoutTag } from '../recipient/recipient-check.js';

/**
 * A job as the service's poll answers it (`GET /v3/universal-ai/async/{job_id}`, spec §2.2, §4.3):
 * at least `job_id` and `status`, with `output` or `error` once finished. Other fields as the
 * service shows them.
 */
export interface PolledJob {
  job_id: string;
  status: string;
  output?: unknown;
  error?: unknown;
  [field: string]: unknown;
}

/**
 * What became of a polled result given to `receiver.handlePolled`:
 * - `handled`: claimed, the handlers ran to success (and on a transactional store committed);
 * - `duplicate`: the job was handled already (by its webhook, or an earlier poll): nothing ran;
 * - `in-flight`: the job is being handled right now (its webhook); `retryAfterMs` says when to look again;
 * - `handler-failed` / `handler-timeout`: as for a webhook: the claim is released (or kept until the handler settles);
 * - `store-unavailable`: the idempotency store failed, nothing ran;
 * - `handlers-busy`: the receiver already runs `maxConcurrentHandlers` handlers: nothing claimed, nothing ran;
 * - `rejected`: the answer is not a finished job (`ERR_PAYLOAD_INVALID`): not final, or a field of the wrong shape.
 */
export interface PolledOutcome {
  kind: 'handled' | 'duplicate' | 'in-flight' | 'handler-failed' | 'handler-timeout' | 'store-unavailable' | 'handlers-busy' | 'rejected';
  /** The job id in lower case, when the answer had one. */
  jobId?: string;
  /** For `in-flight`: ms until the holder's lease ends (a transaction: 30 s). */
  retryAfterMs?: number;
  /** The handler's error (`handler-failed`), the store's (`store-unavailable`) or the refusal (`rejected`). */
  error?: unknown;
}

/** The webhook attributes a poll answer is not guaranteed to carry (spec §2.2): `null` in a polled event when absent. */
export const POLL_OPTIONAL_ATTRIBUTES = ['feature', 'subfeature', 'provider', 'model', 'created_at', 'finished_at'] as const;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(path: string, expected: string): never {
  throw new JobhookError('ERR_PAYLOAD_INVALID', `polled job: ${path} must be ${expected}`, { detail: { path } });
}

/**
 * The event handlers get for a finished job fetched by polling: the poll answer's fields, with
 * `event: "async_job_completed"`. Only `job_id`, `status`, `output` (on success) and `error` (on
 * failure) are guaranteed; each of `feature`, `subfeature`, `provider`, `model`, `created_at` and
 * `finished_at` is the answer's own when it has it (a string; `model` may be `null`), else `null`.
 * A poll carries no signature (TLS and the API key vouch for it) and is not age-checked. The
 * recipient tag, which the service echoes in `user_parameters`, is dropped as the webhook path
 * drops it (`user_parameters` absent when the tag was its only member): it vouches for nothing
 * here, and a handler that stores or logs it would hand a live tag on.
 * @throws JobhookError `ERR_PAYLOAD_INVALID` when the answer is not a finished job of that shape.
 * @internal
 */
export function polledEvent(job: unknown, bigIntegers: BigIntegers): AsyncJobCompletedEvent {
  if (!isObject(job)) invalid('the answer', 'an object');
  if (typeof job['job_id'] !== 'string' || !UUID.test(job['job_id'])) invalid('job_id', 'a UUID string');
  const status = job['status'];
  if (status === 'success') {
    if (!isObject(job['output'])) invalid('output', 'an object when status is "success"');
  } else if (status === 'fail') {
    const error = job['error'];
    if (!isObject(error)) invalid('error', 'an object when status is "fail"');
    if (typeof error['message'] !== 'string') invalid('error.message', 'a string');
    if (error['error_code'] !== undefined && typeof error['error_code'] !== 'string') invalid('error.error_code', 'a string');
  } else {
    invalid('status', '"success" or "fail" (the job is not finished)');
  }
  if (job['user_parameters'] !== undefined && !isObject(job['user_parameters'])) invalid('user_parameters', 'an object');
  // A client may read exact integers as bigint; handlers get them as a webhook gives them.
  const event: Record<string, unknown> = {
    ...(bigIntegers === 'string' ? (bigintsToStrings(job) as Record<string, unknown>) : job),
    event: 'async_job_completed',
  };
  for (const name of POLL_OPTIONAL_ATTRIBUTES) {
    const value = job[name];
    event[name] = typeof value === 'string' ? value : null;
  }
  // The other branch's field, when the answer shows it, is null as in a webhook.
  if (status === 'success' && event['error'] !== undefined) event['error'] = null;
  if (status === 'fail' && event['output'] !== undefined) event['output'] = null;
  // withoutTag deletes in place: the event gets its own copy of the caller's user_parameters first.
  const params = event['user_parameters'];
  if (params !== undefined) event['user_parameters'] = { ...(params as Record<string, unknown>) };
  return withoutTag(event as AsyncJobCompletedEvent);
}

/**
 * `value` with every bigint replaced by the string of its digits (the receiver's default
 * `bigIntegers: 'string'`). Copy on write: a container without a bigint inside is returned as it
 * is, so an answer without big integers (nearly all) costs a walk, not a second copy of the output.
 */
function bigintsToStrings(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const converted = bigintsToStrings(item);
      if (converted !== item) (out ??= value.slice())[i] = converted;
    }
    return out ?? value;
  }
  if (isObject(value)) {
    let out: Record<string, unknown> | undefined;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const v = value[k];
      const converted = bigintsToStrings(v);
      if (converted === v) continue;
      // Spread and defineProperty: a member named __proto__ stays a member, as the parser made it.
      out ??= { ...value };
      Object.defineProperty(out, k, { value: converted, enumerable: true, writable: true, configurable: true });
    }
    return out ?? value;
  }
  return value;
}
