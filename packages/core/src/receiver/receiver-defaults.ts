import { CANONICAL_BYTES_PER_BODY_BYTE, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_DEPTH } from '../canonical/canonical-option-checks.js';
import { DEFAULT_RECIPIENT_TAG_MAX_AGE_MS } from '../recipient/recipient-tag.js';
import { DEFAULT_HEADER_NAMES, type WebhookHeaderNames } from '../signature/headers.js';
import { DEFAULT_MAX_BODY_BYTES_IN_FLIGHT } from './body-budget.js';
import { DEFAULT_CLOCK_SKEW_MS, DEFAULT_MAX_EVENT_AGE_MS } from './event-age.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Default lease of a claim: 20 s. The lease only has to outlive the gap between two renewals
 * (every `leaseMs / 3`, so ~6.7 s), not the handler, so it is chosen for the other case: an instance
 * killed while holding a claim blocks that job until the lease runs out, and the sender's retries
 * must still find it free. A sender that honours our 503 `Retry-After: 30` (the reference sender
 * does; the spec only promises backoff capped at 30 s) retries ≥ 30 s later, so with 20 s the third
 * attempt after a crash takes the job (with 60 s, the first version, only the fourth and last did,
 * by under a second). Shorter would survive faster senders but give a stalled holder (Redis or the
 * event loop stuck past two renewals) less time before a second instance runs the job too.
 */
export const DEFAULT_LEASE_MS = 20_000;

/**
 * Default `handlerTimeoutMs`: 25 s, under the service's 30 s per delivery attempt (spec §8), so the
 * sender gets its 503 before it gives up on the attempt.
 */
export const DEFAULT_HANDLER_TIMEOUT_MS = 25_000;

/** Default `retryAfterSeconds`: 30, the spec's longest backoff between retries. */
export const DEFAULT_RETRY_AFTER_SECONDS = 30;

/**
 * Default `bodyTimeoutMs`: 5 s. The service gives up on a delivery attempt after 30 s (spec §8) and
 * the handler gets at most `handlerTimeoutMs` (25 s) of them before the sender is answered: a body
 * must be in within the 5 s left for that answer to reach the sender in time. A body of 1 MiB
 * needs about 200 KB/s for it, far below any link the service sends from.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

/**
 * Default `bodyStartTimeoutMs`: 2 s. The service sends a delivery's head and body in one burst from
 * a data centre; a body not started 2 s after its head is held on purpose (or its sender is so far
 * behind that the retry is the better bet). Far above the event-loop stalls of a busy receiver.
 */
export const DEFAULT_BODY_START_TIMEOUT_MS = 2_000;

/**
 * Default `minBodyBytesPerSecond`: 16 KiB/s, 32× the 500 B/s of a trickle attack and a thousandth of
 * what the service sends at. A genuine 1 MiB delivery at that pace would still be in within the
 * 5 s of `bodyTimeoutMs` only above 200 KiB/s, which is the bound that decides for large bodies.
 */
export const DEFAULT_MIN_BODY_BYTES_PER_SECOND = 16 * 1024;

/**
 * Default `maxConcurrentHandlers`: 64. The bound is there for a handler's downstream that slows or
 * hangs (each running handler holds its event, a lease renewal timer, often a database connection),
 * not to shape normal traffic: every 503 spends one of the sender's 3 retries, so it sits well above
 * what a process's database pool serves at once (pg's default pool is 10), and with the default
 * `maxBodyBytesInFlight` (64 MiB, 64 bodies of the 1 MiB limit) the events held by running handlers
 * have the same order of ceiling as the bodies being read.
 */
export const DEFAULT_MAX_CONCURRENT_HANDLERS = 64;

/**
 * Default time a handled `job_id` is remembered: 7 days, far past the replay window
 * ({@link DEFAULT_MAX_EVENT_AGE_MS}), so the retries and manual redeliveries of a handled job, and
 * late events `acceptLateEvent` admits, meet its done mark while the store keeps it.
 */
export const DEFAULT_DONE_TTL_MS = 7 * DAY_MS;

/** The defaults of `createReceiver`'s options (and of `createVerifier`'s and `constructEvent`'s limits). */
export interface ReceiverDefaults {
  /** `maxBodyBytes`: 1 MiB. */
  readonly maxBodyBytes: number;
  /** `maxDepth`: 512 nested arrays and objects. */
  readonly maxDepth: number;
  /** `maxCanonicalBytes` with the default `maxBodyBytes`: 16 MiB (it is 16 × `maxBodyBytes`). */
  readonly maxCanonicalBytes: number;
  /** `maxBodyBytesInFlight`: 64 MiB, one budget shared by every receiver of the process given none. */
  readonly maxBodyBytesInFlight: number;
  /** `bodyTimeoutMs`: 5 s from a request's head to its body's last byte. */
  readonly bodyTimeoutMs: number;
  /** `bodyStartTimeoutMs`: 2 s from a request's head to its body's first byte. */
  readonly bodyStartTimeoutMs: number;
  /** `minBodyBytesPerSecond`: 16 KiB/s, the least average pace of a body after `bodyStartTimeoutMs`. */
  readonly minBodyBytesPerSecond: number;
  /** `leaseMs`: 20 s, a claim's lease, renewed every third of it while the handler runs. */
  readonly leaseMs: number;
  /** `doneTtlMs`: 7 days, how long a handled `job_id` is remembered. */
  readonly doneTtlMs: number;
  /** `handlerTimeoutMs`: 25 s, then the sender gets 503 while the handler goes on. */
  readonly handlerTimeoutMs: number;
  /** `retryAfterSeconds`: 30, the `Retry-After` of 503 answers. */
  readonly retryAfterSeconds: number;
  /** `maxEventAgeMs`: 6 h, the replay window. */
  readonly maxEventAgeMs: number;
  /** `clockSkewMs`: 5 min, how far this host's clock may run ahead of the service's. */
  readonly clockSkewMs: number;
  /** `recipientTagMaxAgeMs`: 6 h, the longest age of a recipient tag. */
  readonly recipientTagMaxAgeMs: number;
  /** `headerNames`: the spec's `X-Service-Signature`, `X-Service-Hash-Algorithm`, `X-Service-Webhook`. */
  readonly headerNames: Readonly<WebhookHeaderNames>;
}

/**
 * The receiver's defaults in one frozen object, for code that sizes something after them (a proxy's
 * body limit, a poller's lease, a dashboard's replay window).
 *
 * @example
 * ```ts
 * import { RECEIVER_DEFAULTS } from '@jobhook/core';
 * app.use(express.raw({ limit: RECEIVER_DEFAULTS.maxBodyBytes }));
 * ```
 */
export const RECEIVER_DEFAULTS: ReceiverDefaults = Object.freeze({
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  maxDepth: DEFAULT_MAX_DEPTH,
  maxCanonicalBytes: CANONICAL_BYTES_PER_BODY_BYTE * DEFAULT_MAX_BODY_BYTES,
  maxBodyBytesInFlight: DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
  bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS,
  bodyStartTimeoutMs: DEFAULT_BODY_START_TIMEOUT_MS,
  minBodyBytesPerSecond: DEFAULT_MIN_BODY_BYTES_PER_SECOND,
  leaseMs: DEFAULT_LEASE_MS,
  doneTtlMs: DEFAULT_DONE_TTL_MS,
  handlerTimeoutMs: DEFAULT_HANDLER_TIMEOUT_MS,
  retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS,
  maxEventAgeMs: DEFAULT_MAX_EVENT_AGE_MS,
  clockSkewMs: DEFAULT_CLOCK_SKEW_MS,
  recipientTagMaxAgeMs: DEFAULT_RECIPIENT_TAG_MAX_AGE_MS,
  headerNames: DEFAULT_HEADER_NAMES,
});
