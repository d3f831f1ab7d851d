import { silentLogger, type Logger } from '@jobhook/core';
import type { AttemptRecord, DeliveryTask } from '../delivery/delivery-types.js';
import type { WorkHandlers, WorkQueue } from '../queue/work-queue.js';
import type { JobRecord, JobStore } from './job-record.js';
import { simulateResult } from './simulate-provider.js';

/** What the job service needs of a deliverer (`createDeliverer` gives it). */
export interface AttemptMaker {
  attempt(task: DeliveryTask): Promise<AttemptRecord>;
}

/** Options of {@link createJobService}. */
export interface JobServiceOptions {
  jobs: JobStore;
  queue: WorkQueue;
  deliverer: AttemptMaker;
  /** Clock of `finished_at`. Default `() => new Date()`. */
  now?: () => Date;
  /** pino-compatible. Default silent. */
  logger?: Logger;
}

/** Why a redelivery was refused. */
export type RedeliverRefusal = 'processing' | 'no_receiver' | 'pending';

/** The life of jobs after the HTTP layer: create and schedule, finish, deliver and retry, redeliver. */
export interface JobService {
  /** The queue's handlers: give them to `queue.start`. */
  readonly handlers: WorkHandlers;
  /** Stores a new job and schedules its completion in `delayMs`. */
  submit(job: JobRecord, delayMs: number): Promise<void>;
  /**
   * Queues the webhook of a final job again as a new round (`round + 1`, attempt 1). Refused while
   * the job is processing, when it has no receiver, or while a delivery of it is still pending
   * (two rounds at once would race on the delivery state).
   */
  redeliver(job: JobRecord): Promise<{ ok: true; round: number } | { ok: false; reason: RedeliverRefusal }>;
}

/**
 * Creates the job service. `runJob` finishes a processing job with the simulated provider's result;
 * `jobs.finish` lets only the first runner win, and only the winner queues the webhook (round 0,
 * attempt 1). `deliver` makes one attempt through the deliverer (which records it and the delivery
 * state) and queues the next attempt after `nextDelayMs` when the outcome is `retry`.
 */
export function createJobService(options: JobServiceOptions): JobService {
  const { jobs, queue, deliverer, now = () => new Date(), logger = silentLogger } = options;

  async function runJob(jobId: string): Promise<void> {
    const job = await jobs.get(jobId);
    if (job === undefined) return;
    if (job.status !== 'processing') {
      // Run again for a final job: the queue retried a runner that died (BullMQ, after its lock
      // expired) between finishing the job and queueing its webhook. Queue it now if it never
      // was; the queue's dedupe covers a first attempt already waiting or running.
      if (job.webhookReceiver !== null && job.delivery === 'pending' && job.deliveryRound === 0) {
        if ((await jobs.listAttempts(jobId)).length === 0) await queue.enqueueDelivery({ jobId, round: 0, attempt: 1 });
      }
      return;
    }
    const finished = await jobs.finish(jobId, simulateResult(job, now()));
    if (finished === undefined) return; // another runner finished it first
    logger.info(
      { jobId, status: finished.status, feature: finished.feature, provider: finished.provider, webhook: finished.webhookReceiver !== null },
      'job finished',
    );
    if (finished.webhookReceiver !== null) {
      await jobs.setDelivery(jobId, 'pending', 0);
      await queue.enqueueDelivery({ jobId, round: 0, attempt: 1 });
    }
  }

  async function deliver(task: DeliveryTask): Promise<AttemptRecord> {
    const record = await deliverer.attempt(task);
    const fields = {
      jobId: task.jobId,
      round: task.round,
      attempt: task.attempt,
      url: record.url,
      statusCode: record.statusCode,
      error: record.error,
      durationMs: record.durationMs,
    };
    switch (record.outcome) {
      case 'delivered':
        logger.info(fields, 'webhook delivered');
        break;
      case 'retry':
        logger.warn({ ...fields, nextDelayMs: record.nextDelayMs }, 'webhook attempt failed; retrying');
        await queue.enqueueDelivery({ ...task, attempt: task.attempt + 1 }, record.nextDelayMs ?? 0);
        break;
      case 'rejected':
        logger.warn({ ...fields, errorMessage: record.errorMessage }, 'webhook rejected; not retried');
        break;
      case 'failed':
        logger.warn({ ...fields, errorMessage: record.errorMessage }, 'webhook failed; retries exhausted');
        break;
    }
    return record;
  }

  return {
    handlers: { runJob, deliver },
    async submit(job, delayMs) {
      await jobs.create(job);
      await queue.scheduleJob(job.jobId, delayMs);
      logger.debug({ jobId: job.jobId, delayMs, webhook: job.webhookReceiver !== null }, 'job accepted');
    },
    async redeliver(job) {
      if (job.status === 'processing') return { ok: false, reason: 'processing' };
      if (job.webhookReceiver === null) return { ok: false, reason: 'no_receiver' };
      if (job.delivery === 'pending') return { ok: false, reason: 'pending' };
      const round = job.deliveryRound + 1;
      await jobs.setDelivery(job.jobId, 'pending', round);
      await queue.enqueueDelivery({ jobId: job.jobId, round, attempt: 1 });
      logger.info({ jobId: job.jobId, round }, 'webhook redelivery queued');
      return { ok: true, round };
    },
  };
}
