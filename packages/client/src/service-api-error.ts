/**
 * Stable codes of {@link ServiceApiError}, one per way a call to the service can fail. The HTTP
 * status the service answered (when it answered) is on `error.status`.
 */
export const SERVICE_ERROR_CODES = {
  /** 400: the service refused the request (bad `model`, `input`, `webhook_receiver`, ...). */
  ERR_BAD_REQUEST: 400,
  /** 401: missing, invalid or revoked API key. */
  ERR_UNAUTHORIZED: 401,
  /** 402: not enough credits. */
  ERR_PAYMENT_REQUIRED: 402,
  /** 403: the key may not do this (a scope it lacks). */
  ERR_FORBIDDEN: 403,
  /** 404: no such job (or it belongs to another organization). */
  ERR_NOT_FOUND: 404,
  /** 409: the job is not in a state for this (redeliver before it finished, or without a webhook). */
  ERR_CONFLICT: 409,
  /** 413: the request body is too large for the service. */
  ERR_PAYLOAD_TOO_LARGE: 413,
  /** 415: the service wants `application/json`. */
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  /** 429: rate limited; `retryAfterMs` holds the service's `Retry-After`. `pollJob` retries it. */
  ERR_RATE_LIMITED: 429,
  /** Any other 4xx, or a 3xx (redirects are not followed). */
  ERR_HTTP: null,
  /** 5xx: the service failed or is unavailable. `pollJob` retries it. */
  ERR_SERVICE_UNAVAILABLE: null,
  /** No answer: connection refused or reset, DNS failure. `pollJob` retries it. */
  ERR_NETWORK: null,
  /** No answer within `timeoutMs` (one request), or no final status within `pollJob`'s `timeoutMs`. */
  ERR_TIMEOUT: null,
  /** A 2xx answer that is not the JSON the service sends (not an object, no `job_id`, ...). */
  ERR_RESPONSE_INVALID: null,
  /**
   * A 2xx answer larger than the client's `maxAnswerBytes`: the read stopped there and nothing was
   * parsed. `pollJob` does not retry it; the reconciler abandons the job (reason `answer-too-large`).
   */
  ERR_ANSWER_TOO_LARGE: null,
  /**
   * A poll answer that names another job than the one asked for (compared in lower case, as the
   * receiver keys jobs), no job, or a job twice (duplicate `job_id` keys): never handed to a
   * handler, never marked done. `pollJob` does not retry it.
   */
  ERR_POLL_ANSWER_MISMATCH: null,
} as const;

/** A stable {@link ServiceApiError} code. */
export type ServiceErrorCode = keyof typeof SERVICE_ERROR_CODES;

/** Options of {@link ServiceApiError}. */
export interface ServiceApiErrorOptions {
  /** HTTP status of the answer; absent when there was none (network, timeout). */
  status?: number;
  /** The `detail` string of the service's error body, when it had one. */
  detail?: string;
  /** The answer's `Retry-After`, in ms, when it had a valid one. */
  retryAfterMs?: number;
  /** The underlying error (a fetch `TypeError`, a JSON parse error). */
  cause?: unknown;
}

/**
 * The one error class of `@jobhook/client`: every failed call rejects with it (except an abort
 * through your own `signal`, which rejects with the signal's reason, as `fetch` does).
 *
 * @example
 * ```ts
 * try { await client.getJob(jobId) }
 * catch (err) { if (err instanceof ServiceApiError && err.code === 'ERR_NOT_FOUND') forget(jobId); else throw err }
 * ```
 */
export class ServiceApiError extends Error {
  override readonly name = 'ServiceApiError';
  /** Stable machine-readable code, e.g. `ERR_UNAUTHORIZED`. */
  readonly code: ServiceErrorCode;
  /** HTTP status the service answered; `null` when it did not answer (network, timeout). */
  readonly status: number | null;
  /** The service's `detail` message, when its error body had one. */
  readonly detail: string | null;
  /** `Retry-After` of the answer in ms, when given (429, 503). */
  readonly retryAfterMs: number | null;

  constructor(code: ServiceErrorCode, message: string, options: ServiceApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status ?? null;
    this.detail = options.detail ?? null;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }

  /** True for the failures worth another try later: 429, 5xx, network errors and request timeouts. */
  get retryable(): boolean {
    return (
      this.code === 'ERR_RATE_LIMITED' ||
      this.code === 'ERR_SERVICE_UNAVAILABLE' ||
      this.code === 'ERR_NETWORK' ||
      this.code === 'ERR_TIMEOUT'
    );
  }
}

/** True when `err` is a {@link ServiceApiError}, optionally with the given code. */
export function isServiceApiError(err: unknown, code?: ServiceErrorCode): err is ServiceApiError {
  return err instanceof ServiceApiError && (code === undefined || err.code === code);
}

const CODE_BY_STATUS = new Map<number, ServiceErrorCode>(
  Object.entries(SERVICE_ERROR_CODES).flatMap(([code, status]) => (status === null ? [] : [[status, code as ServiceErrorCode] as const])),
);

/** The code of a non-2xx HTTP status. @internal */
export function codeOfStatus(status: number): ServiceErrorCode {
  if (status >= 500) return 'ERR_SERVICE_UNAVAILABLE';
  return CODE_BY_STATUS.get(status) ?? 'ERR_HTTP';
}
