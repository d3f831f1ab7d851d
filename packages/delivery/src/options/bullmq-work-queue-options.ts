import { silentLogger, type Logger } from '@jobhook/core';
import { checkInteger, checkObject, checkRedisUrl, describeValue, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';
import { resolveLogger } from '@jobhook/core/internal';
import { checkConcurrency } from './work-queue-arguments.js';

/** Options of `createBullmqWorkQueue`. */
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

const WHERE = 'createBullmqWorkQueue';

/** The options checked, defaults applied. @internal */
export interface ResolvedBullmqWorkQueueOptions {
  url: string;
  prefix: string;
  concurrency: number;
  jobConcurrency: number;
  lockDurationMs: number;
  logger: Logger;
}

/** Checks the options of `createBullmqWorkQueue` and applies the defaults. @internal */
export function resolveBullmqWorkQueueOptions(options: BullmqWorkQueueOptions): ResolvedBullmqWorkQueueOptions {
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
    logger: resolveLogger(WHERE, options.logger, () => silentLogger),
  };
}
