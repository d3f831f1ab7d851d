import { ServiceApiError } from './service-api-error.js';

/**
 * The one check of a poll answer, shared by `client.getJob` / `pollJob`, the result waiter and the
 * reconciler: the answer must name the job asked for, compared in lower case as the receiver keys
 * its idempotency store (`A1B2…` and `a1b2…` are one job, so one claim), and name it once.
 * `jobIdKeys` is how many top-level `job_id` keys the answer's bytes had, when the caller read
 * them (`countTopLevelKey`): JavaScript and Python keep the last of duplicates, other parsers the
 * first, so an answer naming two jobs names none. A refused answer is never handed to a handler
 * and never marked done.
 *
 * @returns the job id in lower case (the store's key).
 * @throws ServiceApiError `ERR_POLL_ANSWER_MISMATCH` (not retryable).
 * @example
 * ```ts
 * const key = checkPollAnswer(askedId, await client.getJob(askedId)); // 'a1b2…'
 * ```
 * @internal
 */
export function checkPollAnswer(askedJobId: string, answer: { readonly job_id?: unknown }, jobIdKeys = 1): string {
  const asked = askedJobId.toLowerCase();
  const named = answer.job_id;
  if (jobIdKeys === 1 && typeof named === 'string' && named.toLowerCase() === asked) return asked;
  const what =
    jobIdKeys > 1
      ? `names a job ${jobIdKeys} times (duplicate job_id keys)`
      : `names ${typeof named === 'string' ? `job ${JSON.stringify(named.slice(0, 64))}` : 'no job'}`;
  throw new ServiceApiError('ERR_POLL_ANSWER_MISMATCH', `the poll answer for job ${askedJobId} ${what}: not handled`);
}
