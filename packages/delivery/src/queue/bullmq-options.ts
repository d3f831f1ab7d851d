import { JobhookError, silentLogger, type Logger } from '@jobhook/core';
import { MAX_TIMER_MS } from '@jobhook/core/internal';
import type { JobsOptions } from 'bullmq';
import { checkConcurrency, checkLogger } from './queue-input.js';
import { checkRedisUrl } from './redis-connect.js';

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
  if (typeof options !== 'object' || options === null) throw new JobhookError('ERR_OPTION_INVALID', `${WHERE}: options are required`);
  const url = options.connection;
  checkRedisUrl(WHERE, url);
  const prefix = options.prefix ?? 'jobhook';
  if (typeof prefix !== 'string' || prefix === '' || prefix.includes(':')) {
    throw new JobhookError('ERR_OPTION_INVALID', `${WHERE}: prefix must be a non-empty string without ':', got ${String(prefix)}`);
  }
  const lockDurationMs = options.lockDurationMs ?? 30_000;
  // BullMQ renews the lock on a timer (every lockDurationMs / 2): beyond 2^31-1 ms it would fire at once.
  if (!Number.isSafeInteger(lockDurationMs) || lockDurationMs < 100 || lockDurationMs > MAX_TIMER_MS) {
    throw new JobhookError(
      'ERR_OPTION_INVALID',
      `${WHERE}: lockDurationMs must be an integer from 100 to ${MAX_TIMER_MS}, got ${String(lockDurationMs)}`,
    );
  }
  return {
    url,
    prefix,
    concurrency: checkConcurrency(WHERE, options.concurrency),
    jobConcurrency: checkConcurrency(WHERE, options.jobConcurrency, 'jobConcurrency', 64),
    lockDurationMs,
    logger: options.logger === undefined ? silentLogger : checkLogger(WHERE, options.logger),
  };
}

const reconnect = (attempt: number): number => Math.min(100 * attempt, 2000);

/**
 * Connection options of the BullMQ queues (producers): a command gives up after a few quick
 * reconnection tries, so an enqueue during an outage fails in about a second instead of hanging
 * the caller. @internal
 */
export const queueConnection = (url: string) => ({ url, connectTimeout: 3000, maxRetriesPerRequest: 3, retryStrategy: reconnect });

/** Connection options of the workers: commands wait (BullMQ requires it); reconnects at most 2 s apart. @internal */
export const workerConnection = (url: string) => ({ url, connectTimeout: 3000, retryStrategy: reconnect });
