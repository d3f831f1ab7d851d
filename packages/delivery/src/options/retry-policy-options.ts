import { checkFunction, checkInteger, checkNumber, describeValue, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';

/** Options of `createRetryPolicy`. */
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

/** {@link RetryPolicyOptions} checked, with defaults. @internal */
export type ResolvedRetryPolicyOptions = Required<RetryPolicyOptions>;

const WHERE = 'createRetryPolicy';

/**
 * Checks the options of `createRetryPolicy` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveRetryPolicy(options: RetryPolicyOptions = {}): ResolvedRetryPolicyOptions {
  const { maxRetries = 3, baseMs = 1000, capMs = 30_000, random = Math.random } = options;
  checkInteger(WHERE, 'maxRetries', maxRetries, { min: 0, max: 100 });
  checkNumber(WHERE, 'baseMs', baseMs, { min: 0 });
  // Every delay becomes a timer (or a BullMQ delay): beyond 2^31-1 ms setTimeout fires at once.
  if (typeof capMs !== 'number' || !Number.isFinite(capMs) || capMs > MAX_TIMER_MS) {
    throw optionError(WHERE, `capMs must be a finite number from baseMs to ${MAX_TIMER_MS}, got ${describeValue(capMs)}`);
  }
  if (capMs < baseMs) throw optionError(WHERE, `capMs must be >= baseMs (${baseMs}), got ${String(capMs)}`);
  checkFunction(WHERE, 'random', random);
  return { maxRetries, baseMs, capMs, random };
}
