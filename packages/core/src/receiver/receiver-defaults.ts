import { CANONICAL_BYTES_PER_BODY_BYTE, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_DEPTH } from '../canonical/parse.js';
import { DEFAULT_RECIPIENT_TAG_MAX_AGE_MS } from '../recipient/recipient-tag.js';
import { DEFAULT_HEADER_NAMES, type WebhookHeaderNames } from '../signature/headers.js';
import { DEFAULT_MAX_BODY_BYTES_IN_FLIGHT } from './body-budget.js';
import { DEFAULT_CLOCK_SKEW_MS, DEFAULT_MAX_EVENT_AGE_MS } from './event-age.js';
import {
  DEFAULT_BODY_START_TIMEOUT_MS,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MIN_BODY_BYTES_PER_SECOND,
  DEFAULT_DONE_TTL_MS,
  DEFAULT_HANDLER_TIMEOUT_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_RETRY_AFTER_SECONDS,
} from './receiver-options.js';

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
