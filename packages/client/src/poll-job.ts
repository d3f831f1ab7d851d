import { abortableSleep } from './abortable-sleep.js';
import type { FinishedJob, JobView } from './job-types.js';
import { ServiceApiError } from './service-api-error.js';
import type { ResolvedPollOptions } from './options/poll-options.js';

/** Each pause is this many times the one before, up to `maxIntervalMs`. */
export const POLL_BACKOFF_FACTOR = 1.5;

/** True when the poll answer is final (`success` or `fail`). */
export function isFinished(job: JobView): job is FinishedJob {
  return job.status === 'success' || job.status === 'fail';
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
