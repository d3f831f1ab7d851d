import { isJobhookError } from '@jobhook/core';
import { parseBody } from '@jobhook/core/json';
import { buildWebhookPayload } from '../jobs/webhook-payload.js';
import type { JobRecord } from '../jobs/job-record.js';
import { simulateResult } from '../jobs/simulate-provider.js';
import { ApiError } from './api-error.js';

/** The payload is at most a few MiB (a 1 MiB submission, `output` sent twice): no length limit of its own. */
const NO_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * Whether the canonical form of `job`'s webhook payload may exceed `maxCanonicalBytes`: core's
 * parse (the receivers' bound) computes it and stops once it passes the limit, so this is linear
 * in the payload's length and serializes nothing.
 */
function mayExceed(job: JobRecord, finishedAt: Date, maxCanonicalBytes: number): boolean {
  const payload = buildWebhookPayload({ ...job, ...simulateResult(job, finishedAt) });
  try {
    parseBody(Buffer.from(payload, 'utf8'), { maxBodyBytes: NO_BODY_LIMIT, maxCanonicalBytes });
    return false;
  } catch (err) {
    if (isJobhookError(err, 'ERR_CANONICAL_TOO_LARGE')) return true;
    throw err;
  }
}

/**
 * Refuses, before the job is accepted and charged, a submission whose webhook payload could not be
 * delivered: one whose canonical form (what the sender hashes, and every receiver before verifying)
 * may exceed `maxCanonicalBytes`. Indentation grows with depth, so deep nesting or many tiny values
 * in `user_webhook_parameters` (echoed as `user_parameters`) or `input.simulate.output` (the
 * `output`, and again inside `original_response` with `show_original_response`) make a small
 * submission a huge canonical form. The payload checked is the one the simulated provider will
 * produce (it is deterministic from the submission); the `detail` names the field at fault.
 *
 * @throws ApiError 413
 */
export function checkPayloadCanonicalSize(job: JobRecord, finishedAt: Date, maxCanonicalBytes: number): void {
  if (!mayExceed(job, finishedAt, maxCanonicalBytes)) return;
  // Which client field makes it too large: one that does on its own (the other left out), else both.
  const params = job.userParametersJson !== null;
  const output = job.simulate.outputJson !== undefined;
  const withoutOutput: JobRecord = output ? { ...job, simulate: { ...job.simulate, outputJson: '{}' } } : job;
  let field = 'the submission';
  if (params && mayExceed(withoutOutput, finishedAt, maxCanonicalBytes)) {
    field = 'user_webhook_parameters';
  } else if (output && mayExceed({ ...job, userParametersJson: null }, finishedAt, maxCanonicalBytes)) {
    field = job.showOriginalResponse ? 'input.simulate.output (sent twice: as output and in original_response)' : 'input.simulate.output';
  } else if (params && output) {
    field = 'user_webhook_parameters and input.simulate.output together';
  }
  throw new ApiError(
    413,
    `${field} would make a webhook payload whose canonical form may exceed the limit of ${maxCanonicalBytes} bytes (receivers refuse larger ones): ` +
      'deep nesting and many small values grow with the canonical indentation (2 spaces a level, a line a value); nest less deeply or send fewer values',
  );
}
