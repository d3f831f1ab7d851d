import { JobhookError } from '@jobhook/core';

/** The codes of the reference sender's own errors, with the HTTP status its API answers them with. */
export const SENDER_ERROR_STATUS = {
  /**
   * The memory job store holds as many unfinished jobs (processing, or with a delivery pending) as it
   * may keep (`maxStoredJobs`, `maxStoredJobBytes`): a new job is refused until some finish.
   */
  ERR_STORE_FULL: 503,
} as const;

/** A code of {@link SenderError}. */
export type SenderErrorCode = keyof typeof SENDER_ERROR_STATUS;

/**
 * The reference sender's own errors: a {@link JobhookError} (so `isJobhookError(err, code)` holds)
 * whose codes are the sender's, not a receiver's. Its API answers them; they never reach a caller
 * of `createSender`.
 * @internal
 */
export class SenderError extends JobhookError<SenderErrorCode> {
  override readonly name: string = 'SenderError';
  protected static override readonly statusTable: Readonly<Record<string, number>> = SENDER_ERROR_STATUS;
}
