import type { JobhookError } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import type { ReceiverOutcome, ReceiverStats } from './receiver-outcome.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { PolledJob, PolledOutcome } from './polled-job.js';

/** A request before its body is read. */
export interface RequestHead {
  /** HTTP method. */
  method: string;
  /** Request headers (Node's `req.headers`, any record, or a fetch `Headers`). */
  headers: RequestHeaders;
}

/** One webhook request, as an adapter read it. */
export interface ReceiverRequest extends RequestHead {
  /** The body bytes exactly as received (never a re-serialized object). */
  rawBody: Uint8Array | string;
}

/** The answer to write back: status, headers and a JSON body. */
export interface ReceiverResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text: `{"ok":true,...}` or `{"error":{"code","message"}}`. */
  body: string;
  /** What happened, for logs and tests. */
  outcome: ReceiverOutcome;
  /** The verified event: set whenever the signature verified, whatever the answer. */
  event?: AsyncJobCompletedEvent;
}

/**
 * A request the precheck let through: its headers are in order, a configured key decodes its
 * signature (what that key signed is kept here for the verification: no second RSA operation, no
 * second header check), and its body holds a share of the receiver's `maxBodyBytesInFlight`. Read
 * the body (at most `maxBytes`, stopping when `signal` aborts), then call exactly one of `receive`
 * or `refuse`; either gives the share back, and so does the deadline should neither be called.
 */
export interface Admission {
  /** Most bytes the body may have: its declared `Content-Length`, or `maxBodyBytes` when it declares none. */
  readonly maxBytes: number;
  /**
   * The request's `Content-Length`, as the precheck read it (undefined when it declares none): a
   * body reader holds the body to it without reading the header again.
   */
  readonly declaredBytes: number | undefined;
  /**
   * Aborted `bodyTimeoutMs` after the precheck, with an `ERR_BODY_TIMEOUT` error as its `reason`:
   * stop reading, answer `refuse(signal.reason)` and close the connection.
   */
  readonly signal: AbortSignal;
  /**
   * The same deadline as `signal`, for one reader, without an AbortSignal (making one and listening
   * to it cost about 6 µs per request, an eighth of a whole verification): `listener` is called with
   * the `ERR_BODY_TIMEOUT` error when the deadline passes (at once if it has), unless the returned
   * function was called first. Core's body readers use it when given an admission (optional, so a
   * receiver of your own making may offer `signal` alone).
   */
  onDeadline?(listener: (reason: JobhookError) => void): () => void;
  /** Verifies the body against what the precheck recovered, then runs the pipeline (claim, handler, answer). Never rejects. */
  receive(rawBody: Uint8Array | string): Promise<ReceiverResponse>;
  /**
   * The answer for a body that was not read whole (over `maxBytes`, aborted, timed out, consumed by
   * a body parser), counted and logged like any refusal; a 503 carries `Retry-After`.
   */
  refuse(error: JobhookError): ReceiverResponse;
}

/** What `receiver.precheck` decided: a refusal to send without reading the body, or the admission to read it under. */
export type Precheck =
  | { readonly refusal: ReceiverResponse; readonly admission?: undefined }
  | { readonly refusal?: undefined; readonly admission: Admission };

/** The framework-agnostic receive pipeline. */
export interface Receiver {
  /**
   * Runs one request whose body is already read through the pipeline. Never rejects: every
   * failure is an answer. The adapters run the same pipeline in two steps, `precheck` then the
   * admission's `receive`, so that a body is read only behind a decoded signature.
   */
  handle(request: ReceiverRequest): Promise<ReceiverResponse>;
  /**
   * Hands a finished job fetched by polling (the reconciler's `GET /v3/universal-ai/async/{job_id}`
   * answer) to the same handlers through the same idempotency claim as its webhook, so the job is
   * handled once whichever comes first (inside the store's transaction on PostgreSQL). The context
   * says `source: 'poll'`; the event is described at `HandlerContext.source`. No signature,
   * recipient or age check: the caller vouches for the answer (it came over TLS with the API key).
   * Never rejects: every failure is an outcome.
   */
  handlePolled(job: PolledJob): Promise<PolledOutcome>;
  /**
   * For adapters: everything that needs no body, before a byte of it is read (method, content type,
   * declared `Content-Length`, hash-algorithm and signature headers, the RSA recovery of what a
   * configured key signed, a share of `maxBodyBytesInFlight`). Never throws.
   * @example
   * ```ts
   * const { refusal, admission } = receiver.precheck({ method: req.method, headers: req.headers });
   * if (refusal !== undefined) return send(refusal); // the body is never read
   * const answer = await admission.receive(await readBody(req, admission.maxBytes, admission.signal));
   * ```
   */
  precheck(head: RequestHead): Precheck;
  /** Counters since creation (a copy). */
  stats(): ReceiverStats;
  /** The store in use. */
  readonly store: IdempotencyStore;
  /** Closes a store the receiver created itself (the default memory store). */
  close(): Promise<void>;
}
