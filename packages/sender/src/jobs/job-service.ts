import { formatInstant } from '../accounts/date-time.js';
import { jobPrice } from '../accounts/pricing.js';
import { attemptErrorText, type AttemptRecord, type DeliveryTask, type QueuedWork, type WorkHandlers } from '@jobhook/delivery';
import { resolveJobServiceOptions, type JobServiceOptions } from '../options/job-service-options.js';
import type { JobRecord, JobResult } from './job-record.js';
import type { StoredAttempt } from './signing-key-id.js';
import { simulateResult } from './simulate-provider.js';

export {
  DEFAULT_MAX_REDELIVERIES,
  DEFAULT_REDELIVER_COOLDOWN_MS,
  type AttemptMaker,
  type JobServiceOptions,
} from '../options/job-service-options.js';

/**
 * Why a redelivery was refused. `pending` also covers a lost race: another redeliver of the same job
 * started the next round first, so the caller's copy of the job is out of date. `limit`: the job
 * was redelivered `maxRedeliveries` times already (for good). `cooldown`: the last redeliver of the
 * job was less than `redeliverCooldownMs` ago (`retryAfterMs` says how long is left).
 */
export type RedeliverRefusal = 'processing' | 'no_receiver' | 'pending' | 'limit' | 'cooldown';

/** The answer of {@link JobService.redeliver}. */
export type RedeliverResult =
  | { ok: true; round: number }
  | { ok: false; reason: Exclude<RedeliverRefusal, 'cooldown'> }
  | { ok: false; reason: 'cooldown'; retryAfterMs: number };

/** `error` of a job or an attempt the sender gave up on for an internal reason (not the provider's, nor the receiver's). */
export const INTERNAL_ERROR_CODE = 'internal_error';

/** The life of jobs after the HTTP layer: create and schedule, finish, deliver and retry, redeliver. */
export interface JobService {
  /** The queue's handlers: give them to `queue.start`. */
  readonly handlers: WorkHandlers;
  /**
   * Stores a new job and schedules its completion in `delayMs`. When scheduling fails, the error is
   * thrown and the stored job is finished as `fail` (error_code `internal_error`, no cost, delivery
   * `failed` so no webhook is ever sent): the caller answers an error and never hands out the job id,
   * so the record must not stay `processing`. Best effort: if the store fails as well, it does.
   */
  submit(job: JobRecord, delayMs: number): Promise<void>;
  /**
   * Queues the webhook of a final job again as a new round (`round + 1`, attempt 1). Refused while
   * the job is processing, when it has no receiver, or while a delivery of it is still pending
   * (two rounds at once would race on the delivery state); after `maxRedeliveries` rounds; and
   * within `redeliverCooldownMs` of the last redeliver of the job. `job` may be a stale copy: the
   * round is started with {@link JobStore.startRound}, which re-checks in the store, so of
   * concurrent calls exactly one starts each round and the others are refused (`pending`). The
   * limits hold across sender processes: they are read from the job record (`deliveryRound`,
   * `redeliveredAt`, written by that same atomic step), and a copy older than the record cannot
   * start a round.
   */
  redeliver(job: JobRecord): Promise<RedeliverResult>;
}

/**
 * Creates the job service. `runJob` finishes a processing job with the simulated provider's result;
 * `jobs.finish` lets only the first runner win, and only the winner queues the webhook (round 0,
 * attempt 1). `deliver` makes one attempt through the deliverer (which records it and the delivery
 * state) and queues the next attempt after `nextDelayMs` when the outcome is `retry`.
 *
 * `abandoned` (called by the queue when a handler failed for good, e.g. Redis down through all its
 * retries) puts the work in a final state so nothing stays `processing` or `pending` forever: a job
 * is finished as `fail` with error `{ message: 'internal error', error_code: 'internal_error' }`
 * (cost charged, as for any failed job) and its webhook then goes the normal way; a delivery round
 * is ended as `failed` ({@link JobStore.endRound}) with an attempt record of error
 * `internal_error` appended to its log, so a redeliver can start a new round. Best effort: when the
 * store is still failing then, the job or delivery stays as it was and the failure is logged.
 */
export function createJobService(options: JobServiceOptions): JobService {
  const { jobs, queue, deliverer, now, logger, redeliverCooldownMs, maxRedeliveries } = resolveJobServiceOptions(options);

  async function runJob(jobId: string): Promise<void> {
    const job = await jobs.get(jobId);
    if (job === undefined) return;
    if (job.status !== 'processing') {
      // Run again for a final job: the queue retried a runner that died (BullMQ, after its lock
      // expired) between finishing the job and queueing its webhook.
      await queueLostWebhook(job);
      return;
    }
    const finished = await jobs.finish(jobId, simulateResult(job, now()));
    if (finished === undefined) return; // another runner finished it first
    logger.info(
      {
        jobId,
        status: finished.status,
        feature: finished.feature,
        provider: finished.provider,
        webhook: finished.webhookReceiver !== null,
      },
      'job finished',
    );
    // Delivery is `pending`, round 0, since creation; not set again here, so that a round ended
    // meanwhile (a submission given up on) stays ended and its attempts are skipped.
    if (finished.webhookReceiver !== null) await queue.enqueueDelivery({ jobId, round: 0, attempt: 1 });
  }

  /**
   * Queues round 0 of a final job's webhook if it never was (pending, round 0, nothing attempted);
   * the queue's dedupe covers a first attempt already waiting or running.
   */
  async function queueLostWebhook(job: JobRecord): Promise<void> {
    const { jobId } = job;
    if (job.webhookReceiver !== null && job.delivery === 'pending' && job.deliveryRound === 0) {
      if ((await jobs.listAttempts(jobId)).length === 0) await queue.enqueueDelivery({ jobId, round: 0, attempt: 1 });
    }
  }

  async function abandonJob(jobId: string, err: unknown): Promise<void> {
    const job = await jobs.get(jobId);
    if (job === undefined) return;
    let final = job;
    if (job.status === 'processing') {
      const failed = await jobs.finish(jobId, internalFailure(now(), jobPrice(job.feature)));
      if (failed === undefined) return; // another runner finished it meanwhile: its webhook is that runner's
      logger.error({ err, jobId }, 'job failed: its runner kept failing (internal_error)');
      final = failed;
    }
    // Queue the webhook as runJob would; this also covers a runner that failed after finishing the
    // job, while queueing its webhook.
    try {
      await queueLostWebhook(final);
    } catch (queueErr) {
      // Still cannot queue it: end round 0 as failed rather than pending forever (redeliver works then).
      if (await jobs.endRound(jobId, 0, 'failed'))
        logger.error({ err: queueErr, jobId }, 'webhook failed: it could not be queued (internal_error)');
    }
  }

  async function abandonDelivery(task: DeliveryTask, err: unknown): Promise<void> {
    // Only the round still pending: never overwrite the state of a newer round.
    if (!(await jobs.endRound(task.jobId, task.round, 'failed'))) return;
    logger.error({ err, ...task }, 'webhook failed: the sender gave up on an attempt (internal_error)');
    // A record in the delivery log, so the deliveries listing says why the round ended (after the
    // state: the state matters most, and the log may be what is failing).
    const job = await jobs.get(task.jobId);
    await jobs.appendAttempt(task.jobId, {
      round: task.round,
      attempt: task.attempt,
      startedAt: formatInstant(now()),
      durationMs: 0,
      url: job?.webhookReceiver ?? '',
      address: null,
      statusCode: null,
      error: INTERNAL_ERROR_CODE,
      errorMessage: attemptErrorText(INTERNAL_ERROR_CODE),
      outcome: 'failed',
      nextDelayMs: null,
    });
  }

  /** After `scheduleJob` failed in `submit`: see {@link JobService.submit}. Never throws. */
  async function discardJob(jobId: string, err: unknown): Promise<void> {
    try {
      // No cost: the caller answers an error (the HTTP route refunds the charge).
      const finished = await jobs.finish(jobId, internalFailure(now(), null));
      // Delivery `failed`, not left `pending`, even when a runner finished the job first (the
      // schedule reached Redis after all, then timed out), so that no webhook goes out for a job id
      // nobody was given: the deliverer skips attempts of a round no longer pending. Best effort:
      // an attempt already being sent goes out (its result then does not change the state).
      await jobs.endRound(jobId, 0, 'failed');
      logger.error(
        { err, jobId, finishedHere: finished !== undefined },
        'job could not be scheduled; finished as fail (internal_error), no webhook',
      );
    } catch (storeErr) {
      logger.error(
        { err: storeErr, cause: err, jobId },
        'job could not be scheduled, and recording that failed too: it may stay processing, or its webhook round 0 pending',
      );
    }
  }

  async function abandoned(work: QueuedWork, err: unknown): Promise<void> {
    try {
      if (work.kind === 'job') await abandonJob(work.jobId, err);
      else await abandonDelivery(work.task, err);
    } catch (hookErr) {
      // Best effort (the store may still be down): the work stays as it was; say so, never throw.
      logger.error({ err: hookErr, cause: err, work }, 'could not record abandoned work; it stays processing or pending');
    }
  }

  async function deliver(task: DeliveryTask): Promise<AttemptRecord> {
    const record: StoredAttempt = await deliverer.attempt(task);
    const fields = {
      jobId: task.jobId,
      round: task.round,
      attempt: task.attempt,
      url: record.url,
      statusCode: record.statusCode,
      error: record.error,
      durationMs: record.durationMs,
      // On a 401: the key the webhook was signed with, to set beside the receiver's `keyIdsTried`.
      ...(record.keyId === undefined ? {} : { keyId: record.keyId }),
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
    handlers: { runJob, deliver, abandoned },
    async submit(job, delayMs) {
      await jobs.create(job);
      try {
        await queue.scheduleJob(job.jobId, delayMs);
      } catch (err) {
        await discardJob(job.jobId, err);
        throw err;
      }
      logger.debug({ jobId: job.jobId, delayMs, webhook: job.webhookReceiver !== null }, 'job accepted');
    },
    async redeliver(job) {
      if (job.status === 'processing') return { ok: false, reason: 'processing' };
      if (job.webhookReceiver === null) return { ok: false, reason: 'no_receiver' };
      if (job.delivery === 'pending') return { ok: false, reason: 'pending' };
      if (job.deliveryRound >= maxRedeliveries) return { ok: false, reason: 'limit' };
      const at = now();
      if (job.redeliveredAt !== undefined && redeliverCooldownMs > 0) {
        const since = at.getTime() - Date.parse(job.redeliveredAt);
        // A stamp up to one cooldown in the future (another process's clock ahead of this one)
        // counts as just now; one further ahead is a clock jump, and blocks nothing.
        if (since < redeliverCooldownMs && since > -redeliverCooldownMs) {
          return { ok: false, reason: 'cooldown', retryAfterMs: redeliverCooldownMs - Math.max(0, since) };
        }
      }
      const round = job.deliveryRound + 1;
      // `job` was read before this call and may be stale: the store re-checks and starts the round
      // atomically. A plain write here let concurrent calls all start the same round, and a late
      // one set a finished round back to pending with an attempt the queue then dropped as a duplicate.
      // The limits above were read from `job`: a stale copy cannot start a round (its round number
      // is taken), so they cannot be passed by a copy older than the record.
      if (!(await jobs.startRound(job.jobId, round, formatInstant(at)))) return { ok: false, reason: 'pending' };
      try {
        await queue.enqueueDelivery({ jobId: job.jobId, round, attempt: 1 });
      } catch (err) {
        // Not left pending with nothing queued (every later redeliver would be refused): the round
        // ends failed and the caller's error says to try again. Best effort, like the rest.
        await jobs
          .endRound(job.jobId, round, 'failed')
          .catch((storeErr: unknown) => logger.error({ err: storeErr, jobId: job.jobId, round }, 'could not end the unqueued round'));
        throw err;
      }
      logger.info({ jobId: job.jobId, round }, 'webhook redelivery queued');
      return { ok: true, round };
    },
  };
}

/** The result of a job the sender could not run or schedule (not a provider failure). */
function internalFailure(finishedAt: Date, cost: string | null): JobResult {
  return {
    status: 'fail',
    finishedAt: formatInstant(finishedAt),
    outputJson: null,
    error: { message: 'internal error', error_code: INTERNAL_ERROR_CODE },
    originalResponseJson: null,
    cost,
  };
}
