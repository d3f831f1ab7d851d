import type { CanonicalProfile } from '../canonical/profiles.js';
import type { ErrorCode } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';

/**
 * What happened to one request:
 * - `handled`: verified, claimed, handler ran, 200;
 * - `duplicate`: verified, the job was already handled, 200 without running the handler;
 * - `in-flight`: verified, the job is being handled right now elsewhere, 503 + `Retry-After`;
 * - `handler-failed`: the handler threw, claim released, 500;
 * - `handler-timeout`: the handler outran `handlerTimeoutMs`, 503 (it goes on; the claim is kept until it settles);
 * - `store-unavailable`: the idempotency store failed, 503, nothing handled;
 * - `handlers-busy`: verified, but `maxConcurrentHandlers` handlers were running: 503 + `Retry-After`
 *   (`ERR_HANDLERS_BUSY`) at once, before the claim, nothing handled;
 * - `rejected`: refused before any handling (signature, body, method, content type), 4xx; or 503
 *   with `Retry-After` for a body not read (`ERR_RECEIVER_BUSY`) or not read in time (`ERR_BODY_TIMEOUT`).
 */
export type OutcomeKind =
  | 'handled'
  | 'duplicate'
  | 'in-flight'
  | 'handler-failed'
  | 'handler-timeout'
  | 'store-unavailable'
  | 'handlers-busy'
  | 'rejected';

/** One request's outcome, as given to `onOutcome` and logs. */
export interface ReceiverOutcome {
  kind: OutcomeKind;
  /** HTTP status answered. */
  status: number;
  /** Error code, for every kind but `handled` and `duplicate`. */
  code?: ErrorCode;
  /** The job, once the payload verified. */
  jobId?: string;
  /** Event status (`success` / `fail`), once the payload verified. */
  eventStatus?: string;
  /** The matched profile and key, once verified. */
  profile?: CanonicalProfile;
  keyId?: string;
  /** Time from the start of `handle` to the answer. */
  durationMs: number;
}

/** Counters of a receiver since it was created. */
export interface ReceiverStats {
  /** Requests given to `handle` or `precheck` (each counted once). */
  received: number;
  /** Signatures that verified. */
  verified: number;
  /** Jobs whose handler ran to success. */
  handled: number;
  /** Deliveries of jobs already handled (acknowledged without running the handler). */
  duplicates: number;
  /** Deliveries refused because the same job was in flight. */
  inFlight: number;
  /** Handlers that threw or rejected. */
  handlerFailures: number;
  /** Handlers that outran `handlerTimeoutMs`. */
  handlerTimeouts: number;
  /** Requests answered 503 because the store failed. */
  storeUnavailable: number;
  /** Verified deliveries answered 503 `ERR_HANDLERS_BUSY`: `maxConcurrentHandlers` handlers were running. */
  handlersBusy: number;
  /**
   * Slots of `maxConcurrentHandlers` taken right now: deliveries between their claim and their
   * answer, and handlers still running after a `handler-timeout` answer.
   */
  handlersRunning: number;
  /** Rejections by error code (signature, body, method, content type, payload). */
  rejected: Partial<Record<ErrorCode, number>>;
  /** Bytes of this receiver's `maxBodyBytesInFlight` budget reserved right now by bodies being read (with the default, the budget every receiver of the process shares). */
  bodyBytesInFlight: number;
}

/**
 * What every adapter attaches to the request once the webhook's signature verified, whatever the
 * answer: `res.locals.jobhook` (Express), `ctx.state.jobhook` (Koa), `request.jobhook` (Fastify).
 */
export interface VerifiedWebhook {
  /** The verified event. */
  event: AsyncJobCompletedEvent;
  /** What the receiver made of it: `kind` (handled, duplicate, in-flight, handler-failed, ...), `status`, ... */
  outcome: ReceiverOutcome;
}
