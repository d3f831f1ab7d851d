/**
 * Every error jobhook raises on bad input carries a stable string `code` and the HTTP status a
 * receiver should answer with, so callers branch on codes rather than on messages. This map holds
 * core's codes; the reference sender's packages add their own (`DeliveryError` of
 * `@jobhook/delivery`, `SenderError` of `@jobhook/sender`), as subclasses of {@link JobhookError}.
 */
export const ERROR_STATUS = {
  /** The body is not JSON as Python's `json.loads` reads it (syntax, invalid UTF-8, > 4300-digit integer). */
  ERR_BODY_MALFORMED: 400,
  /** The body parsed, but its top-level value is not a JSON object. */
  ERR_BODY_NOT_OBJECT: 400,
  /** The body nests arrays and objects deeper than `maxDepth`. */
  ERR_BODY_TOO_DEEP: 400,
  /** The body has more bytes than `maxBodyBytes`. */
  ERR_BODY_TOO_LARGE: 413,
  /** The value cannot be written in the requested canonical profile (a lone surrogate in `python`, a 2^64 integer in `orjson`, ...). */
  ERR_CANONICAL_UNREPRESENTABLE: 400,
  /**
   * The body's canonical form may exceed `maxCanonicalBytes` (deep nesting or many tiny values
   * grow with indentation). Refused from a bound computed while parsing, before anything is written.
   */
  ERR_CANONICAL_TOO_LARGE: 413,
  /** No signature header, or an empty one. */
  ERR_SIGNATURE_MISSING: 401,
  /** The signature header is not an even-length hex string. */
  ERR_SIGNATURE_MALFORMED: 401,
  /** The signature does not verify against any key of the ring under any tried profile. */
  ERR_SIGNATURE_INVALID: 401,
  /** The hash-algorithm header names something other than SHA256. */
  ERR_HASH_ALGORITHM_UNSUPPORTED: 401,
  /** The verified payload is not an `async_job_completed` event of the spec's shape; the message names the field. */
  ERR_PAYLOAD_INVALID: 400,
  /**
   * The verified event's signed `finished_at` is older than the receiver's `maxEventAgeMs` (plus
   * its clock-skew allowance): refused as a possible replay of a captured delivery. 4xx, so the
   * sender does not retry it.
   */
  ERR_EVENT_TOO_OLD: 400,
  /**
   * The receiver's `acceptLateEvent` threw or rejected while deciding on an event older than the
   * replay window: nothing was handled, and the sender retries (your rule's error is in the logs).
   */
  ERR_LATE_EVENT_RULE_FAILED: 500,
  /**
   * The receiver has a `recipientSecret`, and the verified event carries no recipient tag
   * (`user_parameters.jobhook_recipient`): a job submitted without it, perhaps by another
   * organization aiming at this URL. 4xx, so the sender does not retry it; the handler never runs.
   */
  ERR_RECIPIENT_TAG_MISSING: 403,
  /**
   * The verified event's recipient tag is not one this receiver made: `detail.cause` is `malformed`,
   * `mac` (made with another secret, or altered), `url` (made for another `recipientUrl`) or
   * `future` (issued later than now plus `clockSkewMs`).
   */
  ERR_RECIPIENT_TAG_INVALID: 403,
  /** The verified event's recipient tag is older than `recipientTagMaxAgeMs` (plus `clockSkewMs`). */
  ERR_RECIPIENT_TAG_EXPIRED: 403,
  /**
   * The verified event's recipient tag is valid, but its nonce is bound to another job already: the
   * tag was copied from one job onto another (`detail.cause` `reused`, `detail.boundJob` not given out).
   */
  ERR_RECIPIENT_TAG_REUSED: 403,
  /**
   * The one code a response body gives for every recipient tag refusal (the `ERR_RECIPIENT_TAG_*`
   * codes above): the service shows the submitter each answer, so the body says no more than "not
   * for this receiver". The specific code and cause stay in the error, the outcome, logs and metrics.
   */
  ERR_RECIPIENT_REFUSED: 403,
  /**
   * A submission's `user_webhook_parameters` already has the member the recipient tag goes in
   * (`jobhook_recipient`): refused before anything is sent, since the service keeps the last of
   * duplicate keys. A client code, not a receiver's.
   */
  ERR_RECIPIENT_KEY_TAKEN: 400,
  /** The request method is not POST. */
  ERR_METHOD_NOT_ALLOWED: 405,
  /** The content type is not JSON. */
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  /** The same job is being handled right now (by this or another instance): retry later. */
  ERR_JOB_IN_FLIGHT: 503,
  /** Your handler threw or rejected; the claim was released so the sender's retry runs it again. */
  ERR_HANDLER_FAILED: 500,
  /** Your handler did not settle in `handlerTimeoutMs`; it keeps running and the sender retries later. */
  ERR_HANDLER_TIMEOUT: 503,
  /** The idempotency store could not be reached; nothing was handled. */
  ERR_STORE_UNAVAILABLE: 503,
  /**
   * A JSON body parser consumed the request before jobhook, and no raw body was captured: mount the
   * webhook route before the parser, or capture the raw bytes (`captureRawBody`). A setup mistake,
   * so 500: the sender retries once it is fixed.
   */
  ERR_BODY_ALREADY_PARSED: 500,
  /** The request body could not be read whole (client aborted, length mismatch). */
  ERR_BODY_INCOMPLETE: 400,
  /**
   * The body did not arrive within the receiver's `bodyTimeoutMs` of its head (a trickled or stalled
   * upload). 503 + `Retry-After`, and the connection is closed: a genuine delivery slowed on the way
   * is retried by the sender.
   */
  ERR_BODY_TIMEOUT: 503,
  /**
   * The receiver is already reading `maxBodyBytesInFlight` bytes of other bodies: this one was not
   * read. 503 + `Retry-After`, so the sender retries; never a 4xx, which it would not retry.
   */
  ERR_RECEIVER_BUSY: 503,
  /**
   * The receiver already runs `maxConcurrentHandlers` handlers: this verified delivery was refused
   * before its claim (no lease is taken, nothing ran). 503 + `Retry-After` at once, never queued,
   * and never a 4xx, which the sender would not retry.
   */
  ERR_HANDLERS_BUSY: 503,
  /** An unexpected failure inside jobhook (a bug): answered 500 so the sender retries, and logged. */
  ERR_INTERNAL: 500,
  /** A key given to jobhook is unusable (not RSA, under 2048 bits, not a PEM, ...). Thrown at construction. */
  ERR_KEY_INVALID: 500,
  /** An option given to a jobhook factory is wrong. Thrown at construction. */
  ERR_OPTION_INVALID: 500,
} as const;

/** A stable code of core's errors (the receiver's answers, keys, options). */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Options of {@link JobhookError}. */
export interface JobhookErrorOptions {
  /** The underlying error, kept for logs. */
  cause?: unknown;
  /** Extra structured detail (byte offset, field path, ...). */
  detail?: Readonly<Record<string, unknown>>;
}

/**
 * The error class of jobhook, and the base of the other packages' error classes: each subclass
 * narrows `Code` to its own codes and brings its code → status map (`statusTable`), so
 * `isJobhookError` and `instanceof JobhookError` hold for every jobhook error while core's
 * {@link ErrorCode} stays closed (`new JobhookError` accepts only core's codes).
 *
 * @example
 * ```ts
 * try { constructEvent(body, headers, verifier) }
 * catch (err) { if (err instanceof JobhookError) res.status(err.status).json(err.toJSON()) }
 * ```
 */
export class JobhookError<Code extends string = ErrorCode> extends Error {
  override readonly name: string = 'JobhookError';
  /** Stable machine-readable code, e.g. `ERR_SIGNATURE_INVALID`. */
  readonly code: Code;
  /** HTTP status a receiver answers with for this error. */
  readonly status: number;
  /** Extra structured detail, if any. */
  readonly detail: Readonly<Record<string, unknown>> | undefined;

  /** The code → HTTP status map of this class's codes; a subclass overrides it with its own. */
  protected static readonly statusTable: Readonly<Record<string, number>> = ERROR_STATUS;

  // NoInfer: `Code` comes from the class (core's codes here, a subclass's own), never from the
  // argument, so `new JobhookError('ERR_NOT_CORES', ...)` does not compile.
  constructor(code: NoInfer<Code>, message: string, options: JobhookErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    // An unknown code can only come from untyped JavaScript: it is a bug, answered as one.
    this.status = (new.target as unknown as { statusTable: Readonly<Record<string, number>> }).statusTable[code] ?? 500;
    this.detail = options.detail;
  }

  /**
   * The JSON error body jobhook answers with: `{ error: { code, message } }`. A recipient tag
   * refusal answers {@link RECIPIENT_REFUSED_ANSWER} whatever its cause, so the body tells whoever
   * probes with tags nothing; `code`, `message` and `detail` keep the cause for your logs.
   */
  toJSON(): { error: { code: Code | typeof RECIPIENT_REFUSED_ANSWER.code; message: string } } {
    if (RECIPIENT_TAG_CODES.has(this.code)) return { error: { ...RECIPIENT_REFUSED_ANSWER } };
    return { error: { code: this.code, message: this.message } };
  }
}

/** What the body of every recipient tag refusal says (`JobhookError.toJSON`), whatever its cause. */
export const RECIPIENT_REFUSED_ANSWER = Object.freeze({
  code: 'ERR_RECIPIENT_REFUSED',
  message: 'this job is not for this receiver',
} as const);

/** The codes of the recipient tag's refusals, answered as {@link RECIPIENT_REFUSED_ANSWER}. */
const RECIPIENT_TAG_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'ERR_RECIPIENT_TAG_MISSING',
  'ERR_RECIPIENT_TAG_INVALID',
  'ERR_RECIPIENT_TAG_EXPIRED',
  'ERR_RECIPIENT_TAG_REUSED',
]);

/**
 * True when `err` is an error of any jobhook package (a {@link JobhookError} or a subclass),
 * optionally with the given code.
 *
 * @example
 * ```ts
 * if (isJobhookError(err, 'ERR_SIGNATURE_INVALID')) log.warn(err.detail);
 * ```
 */
export function isJobhookError(err: unknown): err is JobhookError<string>;
export function isJobhookError<Code extends string>(err: unknown, code: Code): err is JobhookError<Code>;
export function isJobhookError(err: unknown, code?: string): boolean {
  return err instanceof JobhookError && (code === undefined || err.code === code);
}
