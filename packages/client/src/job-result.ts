import type { AsyncJobCompletedEvent, JobError, JsonObject } from '@jobhook/core';
import type { FinishedJob } from './job-types.js';

/** The result of a finished job, whichever way it came. */
export interface JobResult {
  /** The job id in lower case, as the receiver keys jobs. */
  jobId: string;
  status: 'success' | 'fail';
  /** The normalized result on `success`, else null. */
  output: JsonObject | null;
  /** Failure details on `fail`, else null. */
  error: JobError | null;
  /** `webhook`: from a verified webhook (`handleEvent`); `poll`: from the poll answer. */
  source: 'webhook' | 'poll';
  /**
   * The whole verified webhook payload, or the whole final poll answer; in both, `user_parameters`
   * without the recipient tag (`jobhook_recipient`), absent when the tag was its only member.
   */
  data: AsyncJobCompletedEvent | FinishedJob;
}
