// The app's limit on outstanding jobs: every job it submits is a ledger entry until its result is
// handled, and the reconciler polls each entry past its deadline, so the number of entries bounds
// both the credits callers can spend ahead of the results and the length of a reconciler pass.
import { AppError } from './app-answers.mjs';

/**
 * Runs a submission only while the ledger's entries (attached or not) and the submissions this
 * process has admitted and not finished are fewer than `max`. The check and the admission happen
 * in one turn after the count, so a burst of requests admits no more than `max` between them; a
 * submission in flight whose pending entry is already counted counts twice (refused a little early,
 * never late). Processes sharing one ledger do not see each other's submissions in flight: together
 * they may pass `max` by those.
 * @param {{ ledger: import('@jobhook/core/ledger').JobLedger, max: number }} options
 * @example const limit = createOutstandingLimit({ ledger, max: 100 }); await limit.run(() => client.submitJob(job));
 */
export function createOutstandingLimit({ ledger, max }) {
  let admitted = 0;
  const refusal = new AppError(
    429,
    'ERR_TOO_MANY_OUTSTANDING',
    `the app has ${max} jobs waiting for their results (its limit, JOB_APP_MAX_OUTSTANDING): submit again once some are done`,
  );
  return {
    /** Calls `submit` unless the limit is reached. @throws AppError 429 `ERR_TOO_MANY_OUTSTANDING` */
    async run(submit) {
      const { attached, unattached } = await ledger.count();
      if (attached + unattached + admitted >= max) throw refusal;
      admitted++;
      try {
        return await submit();
      } finally {
        admitted--;
      }
    },
  };
}
