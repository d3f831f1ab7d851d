import { silentLogger, type Logger } from '@jobhook/core';
import { checkInteger } from '@jobhook/core/internal';
import type { AttemptRecord, DeliveryTask, WorkQueue } from '@jobhook/delivery';
import type { JobStore } from '../jobs/job-record.js';

/** What the job service needs of a deliverer (`createDeliverer` gives it). */
export interface AttemptMaker {
  attempt(task: DeliveryTask): Promise<AttemptRecord>;
}

/** Options of `createJobService`. */
export interface JobServiceOptions {
  jobs: JobStore;
  queue: WorkQueue;
  deliverer: AttemptMaker;
  /** Clock of `finished_at` and of the redeliver cooldown. Default `() => new Date()`. */
  now?: () => Date;
  /** pino-compatible. Default silent. */
  logger?: Logger;
  /**
   * Shortest time from one redeliver of a job to the next (refused meanwhile: `cooldown`, with
   * `retryAfterMs`); 0 for none. Default {@link DEFAULT_REDELIVER_COOLDOWN_MS}.
   */
  redeliverCooldownMs?: number;
  /** Most redeliveries of one job (rounds after round 0; refused after: `limit`). Default {@link DEFAULT_MAX_REDELIVERIES}. */
  maxRedeliveries?: number;
}

/** Default {@link JobServiceOptions.redeliverCooldownMs}: 10 s. */
export const DEFAULT_REDELIVER_COOLDOWN_MS = 10_000;
/** Default {@link JobServiceOptions.maxRedeliveries}. */
export const DEFAULT_MAX_REDELIVERIES = 20;

/** {@link JobServiceOptions} checked, with defaults. @internal */
export type ResolvedJobServiceOptions = Required<JobServiceOptions>;

const WHERE = 'createJobService';

/**
 * Checks the limits of `createJobService` and applies the defaults (its collaborators come from
 * `createSender`, which made them).
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveJobServiceOptions(options: JobServiceOptions): ResolvedJobServiceOptions {
  const redeliverCooldownMs = options.redeliverCooldownMs ?? DEFAULT_REDELIVER_COOLDOWN_MS;
  const maxRedeliveries = options.maxRedeliveries ?? DEFAULT_MAX_REDELIVERIES;
  return {
    ...options,
    now: options.now ?? (() => new Date()),
    logger: options.logger ?? silentLogger,
    redeliverCooldownMs: checkInteger(WHERE, 'redeliverCooldownMs', redeliverCooldownMs, { min: 0 }),
    maxRedeliveries: checkInteger(WHERE, 'maxRedeliveries', maxRedeliveries, { min: 0 }),
  };
}
