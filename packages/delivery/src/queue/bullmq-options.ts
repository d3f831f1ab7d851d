import { silentLogger, type Logger } from '@jobhook/core';
import { checkInteger, checkObject, checkRedisUrl, describeValue, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';
import type { JobsOptions } from 'bullmq';
import { checkConcurrency, checkLogger } from './queue-input.js';

/** Options of `createBullmqWorkQueue` (bullmq-work-queue.ts). */
export interface BullmqWorkQueueOptions {
  /**
   * Redis URL (`redis://host:port/db`, `rediss://` for TLS). Each BullMQ queue and worker opens its
   * own connections from it (worker connections with `maxRetriesPerRequest: null`, as BullMQ needs).
   */
  connection: string;
  /** Key prefix of the BullMQ queues `sender-jobs` and `sender-deliveries`. Default `'jobhook'`. */
  prefix?: string;
  /** Delivery attempts this process runs at once. Default 16. */
  concurrency?: number;
  /** `runJob` handlers this process runs at once (they are cheap). Default 64. */
  jobConcurrency?: number;
  /**
   * Lock of a running handler, renewed while it runs; when the process dies, its running work is
   * picked up again by another (or the restarted) process after about this long. 100 to 2^31-1; default 30000.
   */
  lockDurationMs?: number;
  /** Where handler failures and Redis errors are logged (pino-compatible). Default: silent. */
  logger?: Logger;
}

/** Names of the two BullMQ queues (under `prefix`). */
export const BULLMQ_QUEUE_NAMES = Object.freeze({ jobs: 'sender-jobs', deliveries: 'sender-deliveries' });

const WHERE = 'createBullmqWorkQueue';
/** A throwing handler is run again this many times in all, after 200 ms then 400 ms. */
const HANDLER_ATTEMPTS = 3;
const HANDLER_BACKOFF_MS = 200;

/**
 * Options of every BullMQ job added. Finished jobs are kept a while and then trimmed, so Redis does
 * not grow without bound. While a job is waiting, delayed or active its id is taken, so an add of
 * the same id is ignored (the dedupe); as long as a finished job is kept, a re-add is ignored too.
 * @internal
 */
export const JOB_OPTIONS: JobsOptions = {
  attempts: HANDLER_ATTEMPTS,
  backoff: { type: 'exponential', delay: HANDLER_BACKOFF_MS },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 24 * 3600, count: 1000 },
};

/** The options checked, defaults applied. @internal */
export interface ResolvedBullmqOptions {
  url: string;
  prefix: string;
  concurrency: number;
  jobConcurrency: number;
  lockDurationMs: number;
  logger: Logger;
}

/** Checks the options of `createBullmqWorkQueue` and applies the defaults. @internal */
export function resolveBullmqOptions(options: BullmqWorkQueueOptions): ResolvedBullmqOptions {
  checkObject(WHERE, 'options', options, 'an object with `connection`');
  const url = options.connection;
  checkRedisUrl(WHERE, 'connection', url);
  const prefix = options.prefix ?? 'jobhook';
  if (typeof prefix !== 'string' || prefix === '' || prefix.includes(':')) {
    throw optionError(WHERE, `prefix must be a non-empty string without ':', got ${describeValue(prefix)}`);
  }
  // BullMQ renews the lock on a timer (every lockDurationMs / 2): beyond 2^31-1 ms it would fire at once.
  const lockDurationMs = checkInteger(WHERE, 'lockDurationMs', options.lockDurationMs ?? 30_000, { min: 100, max: MAX_TIMER_MS });
  return {
    url,
    prefix,
    concurrency: checkConcurrency(WHERE, options.concurrency),
    jobConcurrency: checkConcurrency(WHERE, options.jobConcurrency, 'jobConcurrency', 64),
    lockDurationMs,
    logger: options.logger === undefined ? silentLogger : checkLogger(WHERE, options.logger),
  };
}
