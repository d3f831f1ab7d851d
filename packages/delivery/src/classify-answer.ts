import { readJobhookAnswer, type JobhookAnswer } from './jobhook-answer.js';
import type { PostWebhookResult } from './post-webhook.js';

/** How an attempt ended, before the retry budget is applied. @internal */
export interface AnswerClass {
  /** `delivered`, `rejected` (never retried) or `retryable` (retried while the budget lasts). */
  kind: 'delivered' | 'rejected' | 'retryable';
  statusCode: number | null;
  error: string | null;
  errorMessage: string | null;
  retryAfterMs: number | null;
  /** Bytes of the answer's body read, null without an answer. */
  responseBytes: number | null;
  /** The answer's body when it is a jobhook receiver's answer, else null. */
  responseBody: JobhookAnswer | null;
}

/**
 * Classifies a POST's result per spec §6.4:
 * - 2xx: delivered;
 * - 3xx: rejected with error `redirect_not_followed` (`errorMessage` says whether it had a `Location`, not which).
 *   Redirects are not followed (the target was never checked by the SSRF guard), and retrying
 *   cannot change a redirect, so it is not retried;
 * - 4xx: rejected, never retried;
 * - 5xx: retryable (`Retry-After` kept for the policy);
 * - any other status (a non-standard 1xx final answer, 600+): rejected, error `unexpected_status`;
 * - no answer (timeout, refused, reset, DNS, TLS): retryable, error = Node's code or `timeout`.
 *
 * `errorMessage` here is the detail for the service's log (Node's message may name internal
 * addresses); the deliverer records the fixed text of `error` instead (`attemptErrorText`).
 *
 * The answer's body is kept (`responseBody`) only when it is a jobhook receiver's own answer
 * (`{ok, job_id, duplicate}` or `{error: {code, message}}`, checked strictly by
 * `readJobhookAnswer`); of any other body only its length is kept (`responseBytes`). The receiver
 * URL is the submitter's choice, and may be an allow-listed internal service: echoing its answers
 * would let the submitter read them back (SSRF).
 * @internal
 */
export function classifyAnswer(result: PostWebhookResult, jobId: string): AnswerClass {
  if (result.kind === 'error') {
    return {
      kind: 'retryable',
      statusCode: null,
      error: result.code,
      errorMessage: result.message,
      retryAfterMs: null,
      responseBytes: null,
      responseBody: null,
    };
  }
  const { statusCode } = result;
  const responseBody = readJobhookAnswer(result.body, result.bodyComplete, jobId);
  const base = { statusCode, retryAfterMs: null, error: null, errorMessage: null, responseBytes: result.bodyBytes, responseBody };
  if (statusCode >= 200 && statusCode < 300) return { ...base, kind: 'delivered' };
  if (statusCode >= 300 && statusCode < 400) {
    // Not the Location itself: like a body, it is the receiver's to choose, and is not read back.
    const where = result.location === null ? 'no Location' : 'with a Location';
    return {
      ...base,
      kind: 'rejected',
      error: 'redirect_not_followed',
      errorMessage: `HTTP ${statusCode} (${where}); redirects are not followed`,
    };
  }
  if (statusCode >= 400 && statusCode < 500) return { ...base, kind: 'rejected' };
  if (statusCode >= 500 && statusCode < 600) return { ...base, kind: 'retryable', retryAfterMs: result.retryAfterMs };
  return { ...base, kind: 'rejected', error: 'unexpected_status', errorMessage: `HTTP ${statusCode} is not a status the spec knows` };
}
