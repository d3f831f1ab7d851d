import type { AttemptRecord, DeliveryLog, DeliveryState } from '@jobhook/delivery';
import type { StoredAttempt } from './signing-key-id.js';

export type { DeliveryState };

/** Job states. `processing` is the in-progress state (the spec does not name it); the others are final. */
export type JobStatus = 'processing' | 'success' | 'fail';

/** `error` of a failed job (spec §6.2, §7). */
export interface JobError {
  message: string;
  /** A provider-style error code, e.g. `provider_timeout`. */
  error_code?: string;
}

/** How a submission asked the simulated provider to behave (`input.simulate`). */
export interface SimulatePlan {
  outcome?: 'success' | 'fail';
  /** Processing time before the job finishes. */
  delayMs?: number;
  /** Exact JSON text of `simulate.output`, used as the job's `output`. */
  outputJson?: string;
  errorCode?: string;
}

/**
 * One async job as the service stores it. Members that carry client data are kept as exact JSON text
 * (`...Json`), so floats like `1.0`, big integers and unicode reach the webhook payload unchanged and
 * the record survives a trip through Redis.
 */
export interface JobRecord {
  /** UUID v4. */
  jobId: string;
  /** Organization that submitted it; another organization's poll gets 404. */
  organizationId: string;
  /** `id` of the API key that submitted it (null for a legacy key). */
  keyId: string | null;
  feature: string;
  subfeature: string;
  provider: string;
  /** Provider-specific model; the spec's `model` field of the payload (null when none). */
  model: string | null;
  status: JobStatus;
  /** ISO 8601 with offset. */
  createdAt: string;
  /** ISO 8601 with offset once final, else null. */
  finishedAt: string | null;
  /** Exact JSON text of the submission's `input` (an object). */
  inputJson: string;
  /** The submission's `webhook_receiver`, null when absent. */
  webhookReceiver: string | null;
  /** Exact JSON text of `user_webhook_parameters`, null when absent. */
  userParametersJson: string | null;
  showOriginalResponse: boolean;
  simulate: SimulatePlan;
  /** Exact JSON text of `output` (an object) on success, else null. */
  outputJson: string | null;
  /** Set on `fail`, else null. */
  error: JobError | null;
  /** Exact JSON text of the simulated raw provider response, set when final. */
  originalResponseJson: string | null;
  /** Price charged, a decimal string such as `"0.01"`; set when final. */
  cost: string | null;
  /** Null when the job has no `webhook_receiver`. */
  delivery: DeliveryState | null;
  /** Redelivery round: 0 for the first delivery, +1 for each redeliver call. */
  deliveryRound: number;
  /**
   * When the current round was started by a redeliver call (ISO 8601 with offset): the start of
   * the redeliver cooldown. Absent in round 0 (and in records written before it existed).
   */
  redeliveredAt?: string;
}

/** The final result written once by {@link JobStore.finish}. */
export type JobResult = Pick<JobRecord, 'status' | 'finishedAt' | 'outputJson' | 'error' | 'originalResponseJson' | 'cost'>;

/**
 * Where jobs and their delivery attempts live: memory by default, Redis with `--redis` so another
 * sender process (or this one after a restart) sees them. The deliverer of `@jobhook/delivery` uses
 * it as its {@link DeliveryLog}.
 */
export interface JobStore extends DeliveryLog<JobRecord> {
  create(job: JobRecord): Promise<void>;
  get(jobId: string): Promise<JobRecord | undefined>;
  /**
   * Sets the final result if the job is still `processing` and returns the updated record;
   * `undefined` when it was already final (a second runner lost the race) or is unknown.
   */
  finish(jobId: string, result: JobResult): Promise<JobRecord | undefined>;
  /** Sets the delivery state (and, when given, the round). */
  setDelivery(jobId: string, state: DeliveryState, round?: number): Promise<void>;
  /**
   * Starts redelivery round `round` atomically: sets delivery `pending` and `deliveryRound = round`
   * only if the job is final, has a receiver, its delivery is not `pending` and `deliveryRound` is
   * `round - 1`; returns whether it did. A check on a copy read earlier followed by `setDelivery`
   * would let two concurrent redeliveries both start the same round, or a stale one set a finished
   * round back to `pending`; this check-and-set lets exactly one caller start each round.
   * `redeliveredAt`, when given, is written to the record in the same step.
   */
  startRound(jobId: string, round: number, redeliveredAt?: string): Promise<boolean>;
  /**
   * Ends round `round` with `state` atomically, only if the job's delivery is still `pending` in that
   * round; returns whether it did. Every final outcome goes through it (the deliverer's, and `failed`
   * when the sender gives up for an internal reason), so an attempt that ends late never overwrites
   * a newer round's state nor a round already ended.
   */
  endRound(jobId: string, round: number, state: Exclude<DeliveryState, 'pending'>): Promise<boolean>;
  /** Appends one attempt to the job's delivery log (the memory store drops it when it no longer holds the job). */
  appendAttempt(jobId: string, attempt: AttemptRecord): Promise<void>;
  /** The job's delivery log, oldest first (with the signing key's id on 401 answers: {@link StoredAttempt}). */
  listAttempts(jobId: string): Promise<StoredAttempt[]>;
  /**
   * A page of `organizationId`'s jobs, newest first, read from a per-organization index (the memory
   * store's ordered per-organization list, the Redis store's sorted set per organization), so an
   * organization's list never walks the other organizations' jobs. Jobs the store has forgotten
   * leave the index with them.
   */
  listJobs(organizationId: string, query: JobListQuery): Promise<JobPage>;
  /**
   * How many of `organizationId`'s jobs the store holds, by status and delivery state: the jobs
   * {@link listJobs} would walk through, counted without reading them. Kept up to date at each
   * change of a job (counters in memory, per-state sorted sets in Redis), so the cost of a call does
   * not grow with the organization's jobs.
   */
  countJobs(organizationId: string): Promise<JobCounts>;
  close(): Promise<void>;
}

/**
 * Whether redelivery round `round` may start on `job` (the condition of {@link JobStore.startRound},
 * shared by the stores): final, with a receiver, no delivery pending, and `round` the next round.
 * @internal
 */
export function canStartRound(job: JobRecord, round: number): boolean {
  return (
    job.status !== 'processing' &&
    job.webhookReceiver !== null &&
    job.delivery !== null &&
    job.delivery !== 'pending' &&
    job.deliveryRound === round - 1
  );
}

/** Which of an organization's jobs a list asks for, and where it goes on from. */
export interface JobListQuery {
  /** Most jobs in the page, 1 to `MAX_JOB_PAGE` (job-list.ts). */
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
   * index (`MAX_SCANNED_PER_PAGE`, job-list.ts), so a filter matching few jobs cannot make one request read them all.
   */
  nextCursor: string | null;
}

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
