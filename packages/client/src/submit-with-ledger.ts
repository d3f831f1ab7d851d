import { JobhookError } from '@jobhook/core';
import type { JobLedger } from '@jobhook/core/ledger';
import { resolveLedgerSubmit, type LedgerSubmitOptions } from './options/ledger-submit-options.js';
import { ServiceApiError } from './service-api-error.js';

/**
 * Writes the expected-jobs ledger around one submission of your own code: a pending entry under a
 * submission key before `submit` runs (so a crash during the request leaves a trace), then the job
 * id and the result deadline when it answers. `createClient({ ledger })` does this for every
 * `submitJob` with a `webhook_receiver`; call this when you submit with your own HTTP code.
 *
 * When `submit` rejects with a 4xx `ServiceApiError` (or an error whose numeric `status` is 4xx) no
 * job was made, and the entry is discarded. On any other failure (network, timeout, 5xx) the
 * service may have made the job: the entry stays without a job id, and the reconciler drops it
 * after its grace period with a log line; if the job exists, its webhook is still handled.
 *
 * @example
 * ```ts
 * const job = await submitWithLedger(ledger, async (key) => {
 *   const res = await fetch(`${base}/v3/universal-ai/async`, { method: 'POST', headers, body });
 *   if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
 *   return (await res.json()) as { job_id: string };
 * }, { resultDeadlineMs: 300_000 });
 * ```
 * @throws what `submit` throws; JobhookError `ERR_STORE_UNAVAILABLE` when the ledger cannot be written
 * before the request (nothing was submitted), or, with `detail.jobId`, when the job was made but its
 * id could not be written (the job exists: do not submit it again; its webhook is still handled).
 */
export async function submitWithLedger<T extends { job_id: string }>(
  ledger: JobLedger,
  submit: (key: string) => Promise<T>,
  options: LedgerSubmitOptions = {},
): Promise<T> {
  const { key, now, resultDeadlineMs } = resolveLedgerSubmit(ledger, submit, options);
  await ledger.begin(key, { dueAt: now + resultDeadlineMs });
  let answer: T;
  try {
    answer = await submit(key);
  } catch (err) {
    if (madeNoJob(err)) await ledger.discard(key).catch(() => undefined);
    throw err;
  }
  const jobId = answer?.job_id;
  if (typeof jobId !== 'string' || jobId === '') return answer;
  try {
    await ledger.attach(key, jobId);
  } catch (cause) {
    throw new JobhookError(
      'ERR_STORE_UNAVAILABLE',
      `submitWithLedger: job ${jobId} was submitted, but its id could not be written to the ledger (do not submit it again)`,
      { cause, detail: { jobId, key } },
    );
  }
  return answer;
}

/** A 4xx answer: the service refused the submission, so no job exists. */
function madeNoJob(err: unknown): boolean {
  const status = err instanceof ServiceApiError ? err.status : (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
