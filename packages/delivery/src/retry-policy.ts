import { checkInteger } from '@jobhook/core/internal';
import { resolveRetryPolicy, type RetryPolicyOptions } from './options/retry-policy-options.js';

export type { RetryPolicyOptions } from './options/retry-policy-options.js';

/** When to retry a webhook delivery. */
export interface RetryPolicy {
  /** Attempts of one delivery round: `maxRetries + 1`. */
  readonly maxAttempts: number;
  /**
   * Delay before the attempt after `attempt` (the 1-based attempt just made) failed retryably, or
   * `null` when the budget is spent.
   *
   * The delay is exponential with "equal jitter": `exp = min(capMs, baseMs * 2^(attempt-1))`, delay
   * uniformly in `[exp/2, exp]`, so it grows (never below half the nominal step) yet spreads the
   * retries of many jobs. A `Retry-After` the receiver sent wins when longer:
   * `min(capMs, max(backoff, retryAfterMs))`; the cap wins over `Retry-After` so a receiver cannot
   * park a delivery for hours.
   * @throws JobhookError `ERR_OPTION_INVALID` when `attempt` is not an integer >= 1.
   */
  nextDelayMs(attempt: number, retryAfterMs: number | null): number | null;
}

/**
 * The spec's retry policy: at most 3 retries, exponential backoff with jitter capped at 30 s.
 *
 * @example
 * ```ts
 * const policy = createRetryPolicy({ baseMs: 20, capMs: 500 }); // tests: fast retries
 * policy.nextDelayMs(1, null); // 10..20
 * policy.nextDelayMs(4, null); // null: 4 attempts made
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` on a wrong option.
 */
export function createRetryPolicy(options: RetryPolicyOptions = {}): RetryPolicy {
  const { maxRetries, baseMs, capMs, random } = resolveRetryPolicy(options);
  const maxAttempts = maxRetries + 1;

  return {
    maxAttempts,
    nextDelayMs(attempt, retryAfterMs) {
      // A caller's argument, like an option: refused through the kit (the deliverer passes checked tasks).
      checkInteger('retryPolicy.nextDelayMs', 'attempt', attempt, { min: 1 });
      if (attempt >= maxAttempts) return null;
      // 2 ** (attempt - 1) overflows to Infinity for absurd attempts; min() keeps it at the cap.
      const exp = Math.min(capMs, baseMs * 2 ** (attempt - 1));
      const r = random();
      const jitter = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
      const backoff = exp / 2 + (exp / 2) * jitter;
      const wanted = retryAfterMs !== null && Number.isFinite(retryAfterMs) && retryAfterMs > 0 ? Math.max(backoff, retryAfterMs) : backoff;
      return Math.floor(Math.min(capMs, wanted));
    },
  };
}
