import { JobhookError, rawJson, stringifyJson } from '@jobhook/core';
import type { JobRecord } from '../jobs/job-record.js';

/**
 * The exact JSON text (compact) of the spec §6.2 payload of a final job, members in the spec's
 * order: `event`, `job_id`, `status`, `feature`, `subfeature`, `provider`, `model` (string or null),
 * `created_at`, `finished_at`, then `output` (success only), `error` (fail only:
 * `{message, error_code?}`), `original_response` (only when `showOriginalResponse`; `null` if the job
 * has none) and `user_parameters` (only when the submission set it).
 *
 * Client JSON (`output`, `original_response`, `user_parameters`) is spliced verbatim, so `1.0`,
 * 2^70 and unicode reach the signer exactly as submitted.
 *
 * @example
 * ```ts
 * const json = buildWebhookPayload(job); // '{"event":"async_job_completed","job_id":"…",…}'
 * signPayload(Buffer.from(json), privateKey);
 * ```
 * @throws JobhookError `ERR_INTERNAL` when the job is not final (or a final job lacks its
 *   `output`/`error`), `ERR_BODY_MALFORMED` when a stored JSON text is not one JSON value.
 */
export function buildWebhookPayload(job: JobRecord): string {
  if (job.status !== 'success' && job.status !== 'fail') {
    throw new JobhookError('ERR_INTERNAL', `buildWebhookPayload: job ${job.jobId} is ${job.status}, not final`);
  }
  if (job.finishedAt === null) throw new JobhookError('ERR_INTERNAL', `buildWebhookPayload: job ${job.jobId} is final without finishedAt`);
  const payload: Record<string, unknown> = {
    event: 'async_job_completed',
    job_id: job.jobId,
    status: job.status,
    feature: job.feature,
    subfeature: job.subfeature,
    provider: job.provider,
    model: job.model,
    created_at: job.createdAt,
    finished_at: job.finishedAt,
  };
  if (job.status === 'success') {
    if (job.outputJson === null) throw new JobhookError('ERR_INTERNAL', `buildWebhookPayload: job ${job.jobId} succeeded without output`);
    payload['output'] = rawJson(job.outputJson);
  } else {
    if (job.error === null) throw new JobhookError('ERR_INTERNAL', `buildWebhookPayload: job ${job.jobId} failed without error`);
    // Built member by member so a stored record with extra members cannot leak them.
    payload['error'] =
      job.error.error_code === undefined
        ? { message: job.error.message }
        : { message: job.error.message, error_code: job.error.error_code };
  }
  if (job.showOriginalResponse) payload['original_response'] = rawJson(job.originalResponseJson ?? 'null');
  if (job.userParametersJson !== null) payload['user_parameters'] = rawJson(job.userParametersJson);
  return stringifyJson(payload);
}
