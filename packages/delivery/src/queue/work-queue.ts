import type { AttemptRecord, DeliveryTask } from '../delivery-types.js';

/** One piece of queued work: a job's completion (`runJob`) or one delivery attempt (`deliver`). */
export type QueuedWork = { kind: 'job'; jobId: string } | { kind: 'delivery'; task: DeliveryTask };

/** What the queue runs; the service supplies these (retries are decided there, not in the queue). */
export interface WorkHandlers {
  /** Finishes a job (idempotent: a job already final is left alone). */
  runJob(jobId: string): Promise<void>;
  /** Makes one delivery attempt; when it answers `retry`, the handler enqueues the next attempt. */
  deliver(task: DeliveryTask): Promise<AttemptRecord>;
  /**
   * Called once when the queue gives up on `work` because its handler failed for good (threw on its
   * last run: the memory queue's only run, BullMQ's last retry), with the last error. Without it,
   * such work is only logged, and whatever the handler was to write (a job's result, a delivery's
   * final state) never is. Best effort: the queue awaits it, logs what it throws, and goes on.
   */
  abandoned?(work: QueuedWork, err: unknown): Promise<void>;
}

/** Queue depths, for stats and benchmarks. */
export interface WorkQueueCounts {
  /** Jobs waiting to finish. */
  jobs: number;
  /** Delivery attempts waiting (delayed retries included) or running. */
  deliveries: number;
}

/**
 * Schedules job completion and delivery attempts: in memory by default, on Redis (BullMQ) so that a
 * restart loses nothing and several sender processes share the work.
 *
 * Enqueueing the same job, or the same `(jobId, round, attempt)` delivery, twice is a no-op: that is
 * what keeps one attempt from being sent twice when two processes race.
 */
export interface WorkQueue {
  /** Runs `handlers.runJob(jobId)` after `delayMs`. */
  scheduleJob(jobId: string, delayMs: number): Promise<void>;
  /** Runs `handlers.deliver(task)` after `delayMs` (default 0). */
  enqueueDelivery(task: DeliveryTask, delayMs?: number): Promise<void>;
  /** Starts running work with these handlers. Work enqueued before `start` waits for it. */
  start(handlers: WorkHandlers): Promise<void>;
  counts(): Promise<WorkQueueCounts>;
  /** Stops taking work and waits for running handlers. Queued work stays queued (in Redis) or is dropped (memory). */
  close(): Promise<void>;
}
