import type { PostWebhookResult } from './post-webhook.js';

/** How an attempt ended, before the retry budget is applied. @internal */
export interface AnswerClass {
  /** `delivered`, `rejected` (never retried) or `retryable` (retried while the budget lasts). */
  kind: 'delivered' | 'rejected' | 'retryable';
  statusCode: number | null;
  error: string | null;
  errorMessage: string | null;
  retryAfterMs: number | null;
}

const SNIPPET_CHARS = 200;

/**
 * Classifies a POST's result per spec §6.4:
 * - 2xx: delivered;
 * - 3xx: rejected with error `redirect_not_followed` (`errorMessage` holds the `Location`).
 *   Redirects are not followed (the target was never checked by the SSRF guard), and retrying
 *   cannot change a redirect, so it is not retried;
 * - 4xx: rejected, never retried;
 * - 5xx: retryable (`Retry-After` kept for the policy);
 * - any other status (a non-standard 1xx final answer, 600+): rejected, error `unexpected_status`;
 * - no answer (timeout, refused, reset, DNS, TLS): retryable, error = Node's code or `timeout`.
 *
 * For an HTTP answer other than 2xx, `errorMessage` holds the start of the receiver's body, which
 * usually says why (e.g. jobhook receivers answer `{"error":{"code":"ERR_SIGNATURE_INVALID",...}}`).
 * @internal
 */
export function classifyAnswer(result: PostWebhookResult): AnswerClass {
  if (result.kind === 'error') {
    return { kind: 'retryable', statusCode: null, error: result.code, errorMessage: result.message, retryAfterMs: null };
  }
  const { statusCode } = result;
  const snippet = result.bodyText === '' ? null : result.bodyText.slice(0, SNIPPET_CHARS);
  const base = { statusCode, retryAfterMs: null, error: null, errorMessage: snippet };
  if (statusCode >= 200 && statusCode < 300) return { ...base, kind: 'delivered', errorMessage: null };
  if (statusCode >= 300 && statusCode < 400) {
    const where = result.location === null ? 'no Location' : `Location: ${result.location.slice(0, SNIPPET_CHARS)}`;
    return { ...base, kind: 'rejected', error: 'redirect_not_followed', errorMessage: `HTTP ${statusCode} (${where}); redirects are not followed` };
  }
  if (statusCode >= 400 && statusCode < 500) return { ...base, kind: 'rejected' };
  if (statusCode >= 500 && statusCode < 600) return { ...base, kind: 'retryable', retryAfterMs: result.retryAfterMs };
  return { ...base, kind: 'rejected', error: 'unexpected_status', errorMessage: `HTTP ${statusCode} is not a status the spec knows` };
}
