import type { DeliveryState, JobRecord, JobStatus } from './job-record.js';

/** Which of an organization's jobs a list asks for, and where it goes on from. */
export interface JobListQuery {
  /** Most jobs in the page, 1 to {@link MAX_JOB_PAGE}. */
  limit: number;
  /** `nextCursor` of the previous page: the page starts after it. Absent: the newest job. */
  cursor?: string;
  /** Only jobs in this status. */
  status?: JobStatus;
  /** Only jobs in this delivery state; `none`: jobs without a `webhook_receiver`. */
  delivery?: DeliveryState | 'none';
}

/** One page of an organization's jobs, newest first. */
export interface JobPage {
  jobs: JobRecord[];
  /**
   * Where the next page starts, or null when the index has no older job. A filtered page may hold
   * fewer than `limit` jobs (even none) and still have a cursor: each page scans a bounded part of the
   * index ({@link MAX_SCANNED_PER_PAGE}), so a filter matching few jobs cannot make one request read them all.
   */
  nextCursor: string | null;
}

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

/**
 * How many of an organization's jobs the store holds, all of them (not a page): by status and by
 * delivery state (`none` for jobs without a receiver). Each job is in one status and one delivery
 * state, so each group sums to `jobs`.
 */
export interface JobCounts {
  jobs: number;
  status: Record<JobStatus, number>;
  delivery: Record<DeliveryState | 'none', number>;
}

/** Counts of no job. @internal */
export function emptyJobCounts(): JobCounts {
  return {
    jobs: 0,
    status: { processing: 0, success: 0, fail: 0 },
    delivery: { pending: 0, delivered: 0, rejected: 0, failed: 0, none: 0 },
  };
}
