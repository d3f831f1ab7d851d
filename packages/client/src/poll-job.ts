import { abortableSleep } from './abortable-sleep.js';
import type { FinishedJob, JobView } from './job-types.js';
import { ServiceApiError } from './service-api-error.js';
import { checkMs, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';

/** Default of {@link PollOptions.intervalMs}: the spec's examples poll every few seconds. */
export const DEFAULT_POLL_INTERVAL_MS = 2_000;
/** Default of {@link PollOptions.maxIntervalMs}. */
export const DEFAULT_MAX_POLL_INTERVAL_MS = 30_000;
/** Default of {@link PollOptions.timeoutMs}: 10 minutes. */
export const DEFAULT_POLL_TIMEOUT_MS = 600_000;
/** Each pause is this many times the one before, up to `maxIntervalMs`. */
export const POLL_BACKOFF_FACTOR = 1.5;

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

/** True when the poll answer is final (`success` or `fail`). */
export function isFinished(job: JobView): job is FinishedJob {
  return job.status === 'success' || job.status === 'fail';
}

/**
 * Applies defaults and checks poll options.
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

/**
 * Polls until the job is final. Pauses grow ×1.5 from `intervalMs` to `maxIntervalMs`; 429, 5xx,
 * network errors and request timeouts are retried after the current pause (at least the answer's
 * `Retry-After`); any other error is thrown at once. Each request's timeout is cut to the time
 * left, so the deadline holds even while a request hangs.
 * @param getOnce one poll request with its own timeout.
 * @internal
 */
export async function pollUntilFinished(
  jobId: string,
  getOnce: (timeoutMs: number, signal: AbortSignal | undefined) => Promise<JobView>,
  requestTimeoutMs: number,
  options: ResolvedPollOptions,
): Promise<FinishedJob> {
  const { signal, timeoutMs, maxIntervalMs } = options;
  if (signal?.aborted === true) throw signal.reason;
  const deadline = performance.now() + timeoutMs;
  let pauseMs = options.intervalMs;
  let lastStatus: string | undefined;
  let lastError: ServiceApiError | undefined;
  for (;;) {
    const leftMs = Math.floor(deadline - performance.now());
    if (leftMs <= 0) {
      const last = `last status: ${lastStatus ?? 'none'}${lastError === undefined ? '' : `; last error: ${lastError.message}`}`;
      throw new ServiceApiError('ERR_TIMEOUT', `job ${jobId} is not final after ${timeoutMs} ms (${last})`, {
        ...(lastError === undefined ? {} : { cause: lastError }),
      });
    }
    let waitMs = pauseMs;
    try {
      const job = await getOnce(Math.min(requestTimeoutMs, leftMs), signal);
      if (isFinished(job)) return job;
      lastStatus = job.status;
      lastError = undefined;
    } catch (err) {
      if (!(err instanceof ServiceApiError) || !err.retryable) throw err;
      lastError = err;
      waitMs = Math.max(pauseMs, err.retryAfterMs ?? 0);
    }
    pauseMs = Math.min(Math.round(pauseMs * POLL_BACKOFF_FACTOR), maxIntervalMs);
    await abortableSleep(Math.max(0, Math.min(waitMs, deadline - performance.now())), signal);
  }
}
