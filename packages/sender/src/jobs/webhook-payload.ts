import { JobhookError } from '@jobhook/core';
import { rawJson, stringifyJson, type RawJson } from '@jobhook/core/json';
import type { JobRecord } from './job-record.js';

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
  if (job.status === 'success' && job.outputJson === null) {
    throw new JobhookError('ERR_INTERNAL', `buildWebhookPayload: job ${job.jobId} succeeded without output`);
  }
  if (job.status === 'fail' && job.error === null) {
    throw new JobhookError('ERR_INTERNAL', `buildWebhookPayload: job ${job.jobId} failed without error`);
  }
  const payload = { event: 'async_job_completed', ...jobMembers(job) };
  return stringifyJson(payload);
}

/**
 * The members a job shows both in its webhook payload and in its polling answer (spec §2.2: "output
 * and error as in the webhook payload"): `job_id`, `status`, `feature`, `subfeature`, `provider`,
 * `model`, `created_at`, `finished_at`; `output` on success, `error` (`{message, error_code?}`) on
 * fail; `original_response` when requested and the job is final; `user_parameters` when given.
 * Client JSON is spliced as {@link RawJson}.
 */
export function jobMembers(job: JobRecord): Record<string, unknown> {
  const members: Record<string, unknown> = {
    job_id: job.jobId,
    status: job.status,
    feature: job.feature,
    subfeature: job.subfeature,
    provider: job.provider,
    model: job.model,
    created_at: job.createdAt,
    finished_at: job.finishedAt,
  };
  if (job.status === 'success' && job.outputJson !== null) members['output'] = rawJson(job.outputJson);
  if (job.status === 'fail' && job.error !== null) {
    // Built member by member so a stored record with extra members cannot leak them.
    members['error'] =
      job.error.error_code === undefined
        ? { message: job.error.message }
        : { message: job.error.message, error_code: job.error.error_code };
  }
  if (job.status !== 'processing' && job.showOriginalResponse) members['original_response'] = rawJson(job.originalResponseJson ?? 'null');
  if (job.userParametersJson !== null) members['user_parameters'] = rawJson(job.userParametersJson);
  return members;
}
