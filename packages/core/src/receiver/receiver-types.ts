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
  /**
   * The client's address as the framework resolves it, honouring its own proxy setting (Express
   * `req.ip` with `trust proxy`, Koa `ctx.ip` with `app.proxy`, Fastify `request.ip` with
   * `trustProxy`, `createFetchHandler`'s `clientAddress` option). Body bytes are charged to it in the
   * body budget, and under pressure no client holds more than its share (IPv6 grouped by /64).
   * Absent: every such request shares one key. A job that someone else submitted with your URL comes
   * from the service's own address: a share per address cannot tell those apart (the recipient tag does).
   */
  clientAddress?: string | undefined;
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
 * second header check), and no other body with the same signature from the same client is being
 * read. Read the body (at most `maxBytes`, charging each chunk with `charge` as it arrives, stopping
 * at the deadline), then call exactly one of `receive` or `refuse`; either gives the charged bytes
 * back, and so does the deadline should neither be called.
 *
 * Nothing is reserved up front: a request that announces a large `Content-Length` and sends nothing
 * holds none of `maxBodyBytesInFlight`. A reader that does not call `charge` (a body a framework
 * read before the adapter, a whole body given to `receive`) is not counted in the budget.
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
   * Aborted at the body's deadline, with an `ERR_BODY_TIMEOUT` error as its `reason`: no first byte
   * `bodyStartTimeoutMs` after the precheck, an average pace below `minBodyBytesPerSecond` after
   * that, or not whole `bodyTimeoutMs` after the precheck. Stop reading, answer
   * `refuse(signal.reason)` and close the connection.
   */
  readonly signal: AbortSignal;
  /**
   * Charges `bytes` just read to `maxBodyBytesInFlight` under this request's client (and moves the
   * pace deadline on). An error (`ERR_RECEIVER_BUSY`, 503) means stop reading, answer
   * `refuse(error)` and close the connection. Optional, so a receiver of your own making still
   * type-checks; core's readers call it when it is there.
   */
  charge?(bytes: number): JobhookError | undefined;
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
