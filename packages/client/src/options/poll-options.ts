import { checkMs, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';

/** Default of {@link PollOptions.intervalMs}: the spec's examples poll every few seconds. */
export const DEFAULT_POLL_INTERVAL_MS = 2_000;
/** Default of {@link PollOptions.maxIntervalMs}. */
export const DEFAULT_MAX_POLL_INTERVAL_MS = 30_000;
/** Default of {@link PollOptions.timeoutMs}: 10 minutes. */
export const DEFAULT_POLL_TIMEOUT_MS = 600_000;

/** Options of `client.pollJob`. */
export interface PollOptions {
  /** First pause between two polls, ms. Default 2,000. */
  intervalMs?: number;
  /** Longest pause: the pause grows ×1.5 per poll up to this. Default 30,000. */
  maxIntervalMs?: number;
  /** Give up with `ERR_TIMEOUT` when the job is not final after this long. Default 600,000 (10 min). */
  timeoutMs?: number;
  /** Stops polling at once; the promise rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** Poll options after defaults and checks. @internal */
export interface ResolvedPollOptions {
  intervalMs: number;
  maxIntervalMs: number;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

/**
 * Applies defaults and checks poll options: those of `client.pollJob`, and the poll settings of
 * `createResultWaiter` (so both report the same messages).
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option, `owner` first.
 * @internal
 */
export function resolvePollOptions(options: PollOptions, owner: string): ResolvedPollOptions {
  const { intervalMs = DEFAULT_POLL_INTERVAL_MS, timeoutMs = DEFAULT_POLL_TIMEOUT_MS, signal } = options;
  const maxIntervalMs = options.maxIntervalMs ?? Math.max(DEFAULT_MAX_POLL_INTERVAL_MS, intervalMs);
  checkMs(owner, 'intervalMs', intervalMs, { max: MAX_TIMER_MS });
  checkMs(owner, 'maxIntervalMs', maxIntervalMs, { max: MAX_TIMER_MS });
  checkMs(owner, 'timeoutMs', timeoutMs, { max: MAX_TIMER_MS });
  if (maxIntervalMs < intervalMs) {
    throw optionError(owner, `maxIntervalMs (${maxIntervalMs}) must not be below intervalMs (${intervalMs})`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw optionError(owner, 'signal must be an AbortSignal');
  return { intervalMs, maxIntervalMs, timeoutMs, signal };
}
