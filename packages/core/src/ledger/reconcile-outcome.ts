/**
 * What a reconciler did with one due ledger entry:
 * - `reconciled`: the poll found the job finished and its handlers ran (the result came by poll);
 * - `already-handled`: finished, and handled already (its webhook won): settled without running anything;
 * - `pending`: not finished yet; polled again later (backoff);
 * - `in-flight`: finished, but its webhook is being handled right now; looked at again shortly;
 * - `handler-failed`: finished, but the handler failed, timed out or the store was down, or every
 *   handler slot was taken (`code` `ERR_HANDLERS_BUSY`); retried later;
 * - `rate-limited`: the service answered 429; polling pauses for its `Retry-After`;
 * - `poll-failed`: the poll failed (5xx, network, timeout, 401/403, an answer of the wrong shape, an
 *   answer naming another job: `code` `ERR_POLL_ANSWER_MISMATCH`); retried later;
 * - `waiting-for-job-id`: the entry has no job id yet (its submission may still be answering);
 * - `abandoned`: given up, with `reason`: `not-found` (the service answered 404: it no longer knows
 *   the job), `horizon` (still unfinished, or unreadable, past the horizon), `no-job-id` (no job id
 *   came within the grace period: the process died during the submit, or the submit failed without
 *   saying whether a job was made), `answer-too-large` (the poll answer is larger than the client's
 *   `maxAnswerBytes`: logged with the job id, to fetch by hand).
 */
export interface ReconcileOutcome {
  kind:
    | 'reconciled'
    | 'already-handled'
    | 'pending'
    | 'in-flight'
    | 'handler-failed'
    | 'rate-limited'
    | 'poll-failed'
    | 'waiting-for-job-id'
    | 'abandoned';
  /** The entry's submission key. */
  key: string;
  /** The job id, or `null` for an entry without one. */
  jobId: string | null;
  /** Why it was abandoned (`abandoned` only). */
  reason?: AbandonReason;
  /** The error code of a failed poll or handler (`ServiceApiError` / `JobhookError` code), when there was one. */
  code?: string;
}

/** Why a reconciler gave up on an entry. */
export type AbandonReason = 'not-found' | 'horizon' | 'no-job-id' | 'answer-too-large';

/** Every {@link ReconcileOutcome} kind, for metrics and reports. */
export const RECONCILE_OUTCOME_KINDS: readonly ReconcileOutcome['kind'][] = [
  'reconciled',
  'already-handled',
  'pending',
  'in-flight',
  'handler-failed',
  'rate-limited',
  'poll-failed',
  'waiting-for-job-id',
  'abandoned',
];
