import type { JobhookAnswer } from './jobhook-answer.js';

/** One webhook delivery attempt to make. Small on purpose: the payload is built from the job record. */
export interface DeliveryTask {
  jobId: string;
  /** Redelivery round (see `DeliverySubject.deliveryRound`). */
  round: number;
  /** 1-based attempt number within the round; attempt 1 is the first try, 4 the last with 3 retries. */
  attempt: number;
}

/**
 * What happened to one attempt.
 * - `delivered`: 2xx;
 * - `rejected`: 4xx, or refused before sending (SSRF guard, unknown job): never retried;
 * - `retry`: 5xx, timeout or network error with budget left: `nextDelayMs` says when;
 * - `failed`: 5xx, timeout or network error on the last attempt.
 */
export type AttemptOutcome = 'delivered' | 'rejected' | 'retry' | 'failed';

/** One attempt as recorded and listed by `GET /v3/universal-ai/async/{job_id}/deliveries`. */
export interface AttemptRecord {
  round: number;
  attempt: number;
  /** ISO 8601 with offset. */
  startedAt: string;
  /** From the start of the attempt to the answer's status line or the error. */
  durationMs: number;
  url: string;
  /**
   * The address connected to (checked by the SSRF guard), null when none was reached. Kept for the
   * service; a view for the job's submitter should show it only when it is public (it may be an
   * allow-listed internal address).
   */
  address: string | null;
  /** HTTP status of the answer, null when there was none. */
  statusCode: number | null;
  /** Stable error code when there was no answer or the attempt was refused: `timeout`, `ECONNREFUSED`, `ssrf_refused`, ... */
  error: string | null;
  /**
   * The fixed text of `error` (`attemptErrorText`), one per code: never Node's message, which may
   * name internal addresses or host names (the deliverer logs it instead).
   */
  errorMessage: string | null;
  outcome: AttemptOutcome;
  /** Delay before the next attempt when `outcome` is `retry`, else null. */
  nextDelayMs: number | null;
  /**
   * Bytes of the answer's body read (reading stops at 64 KiB or the deadline), for every HTTP
   * answer, 2xx included; null (or absent, in records written before it existed) without an answer.
   */
  responseBytes?: number | null;
  /**
   * The answer's body, only when it is a jobhook receiver's own answer (`{ok, job_id, duplicate}` or
   * `{error: {code, message}}`, at most 1 KB, checked strictly); null for any other body, which is
   * never kept: an internal service's answer must not be read back through the log.
   */
  responseBody?: JobhookAnswer | null;
}
