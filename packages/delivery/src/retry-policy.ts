import { checkFunction, checkInteger, checkNumber, describeValue, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';

/** Options of {@link createRetryPolicy}. */
export interface RetryPolicyOptions {
  /** Retries after the first attempt. Default 3 (spec §8: "retries up to 3 times"). */
  maxRetries?: number;
  /** Backoff before the first retry, before jitter. Default 1000. */
  baseMs?: number;
  /** No delay is ever longer, `Retry-After` included; at most 2^31-1. Default 30000 (spec §8). */
  capMs?: number;
  /** Source of jitter in [0, 1). Default `Math.random`. */
  random?: () => number;
}

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
  const { maxRetries = 3, baseMs = 1000, capMs = 30_000, random = Math.random } = options;
  const owner = 'createRetryPolicy';
  checkInteger(owner, 'maxRetries', maxRetries, { min: 0, max: 100 });
  checkNumber(owner, 'baseMs', baseMs, { min: 0 });
  // Every delay becomes a timer (or a BullMQ delay): beyond 2^31-1 ms setTimeout fires at once.
  if (typeof capMs !== 'number' || !Number.isFinite(capMs) || capMs > MAX_TIMER_MS) {
    throw optionError(owner, `capMs must be a finite number from baseMs to ${MAX_TIMER_MS}, got ${describeValue(capMs)}`);
  }
  if (capMs < baseMs) throw optionError(owner, `capMs must be >= baseMs (${baseMs}), got ${String(capMs)}`);
  checkFunction(owner, 'random', random);
  const maxAttempts = maxRetries + 1;

  return {
    maxAttempts,
    nextDelayMs(attempt, retryAfterMs) {
      if (!Number.isSafeInteger(attempt) || attempt < 1) {
        throw new RangeError(`nextDelayMs: attempt must be an integer >= 1, got ${String(attempt)}`);
      }
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
