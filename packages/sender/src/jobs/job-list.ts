import type { DeliveryState, JobCounts, JobListQuery, JobRecord, JobStatus } from './job-record.js';

/** Largest `limit` of a job list. */
export const MAX_JOB_PAGE = 100;
/** Index entries one page reads at most, matched or not. */
export const MAX_SCANNED_PER_PAGE = 1000;

/** Whether `job` passes the query's filters. @internal */
export function matchesJobQuery(job: JobRecord, query: JobListQuery): boolean {
  if (query.status !== undefined && job.status !== query.status) return false;
  if (query.delivery !== undefined && (job.delivery ?? 'none') !== query.delivery) return false;
  return true;
}

/** A cursor is the index position of the last job scanned: a non-negative integer in decimal. */
const CURSOR_PATTERN = /^(0|[1-9][0-9]{0,15})$/;

/** The index position a cursor names, or undefined when the text is not one. @internal */
export function parseJobCursor(cursor: string): number | undefined {
  if (!CURSOR_PATTERN.test(cursor)) return undefined;
  const position = Number(cursor);
  return Number.isSafeInteger(position) ? position : undefined;
}

/** Job statuses, in the order counts list them. */
export const JOB_STATUSES: readonly JobStatus[] = ['processing', 'success', 'fail'];
/** Delivery states and `none` (no `webhook_receiver`), in the order counts list them. */
export const JOB_DELIVERIES: readonly (DeliveryState | 'none')[] = ['pending', 'delivered', 'rejected', 'failed', 'none'];

/** Counts of no job. @internal */
export function emptyJobCounts(): JobCounts {
  return {
    jobs: 0,
    status: { processing: 0, success: 0, fail: 0 },
    delivery: { pending: 0, delivered: 0, rejected: 0, failed: 0, none: 0 },
  };
}
