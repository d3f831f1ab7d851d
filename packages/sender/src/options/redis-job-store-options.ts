import type { Cluster, Redis } from 'ioredis';
import { checkMs, checkObject, describeValue, optionError } from '@jobhook/core/internal';

/** Options of `createRedisJobStore`. */
export interface RedisJobStoreOptions {
  /**
   * An ioredis client (stays yours: never closed by the store), a Redis Cluster client included, or
   * a `redis://` / `rediss://` URL (the store opens its own client, checks it answers, and closes it
   * in `close()`).
   */
  redis: string | Redis | Cluster;
  /** Prefix of every key; must not contain `{` or `}`. Default `'jobhook:sender:'`. */
  prefix?: string;
  /** How long a job record lives after `create`, in ms. Default 7 days. */
  jobTtlMs?: number;
  /** How long a job's delivery log lives after its last appended attempt, in ms. Default: `jobTtlMs`. */
  attemptsTtlMs?: number;
}

/** Default of {@link RedisJobStoreOptions.jobTtlMs}: 7 days. */
export const DEFAULT_JOB_TTL_MS = 7 * 24 * 3600 * 1000;
/** {@link RedisJobStoreOptions} checked, with defaults (`redis` is checked where it is opened, by the kit's `redisFromOption`). @internal */
export interface ResolvedRedisJobStoreOptions {
  redis: string | Redis | Cluster;
  prefix: string;
  jobTtlMs: number;
  attemptsTtlMs: number;
}

const WHERE = 'createRedisJobStore';

/**
 * Checks the options of `createRedisJobStore` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveRedisJobStoreOptions(options: RedisJobStoreOptions): ResolvedRedisJobStoreOptions {
  checkObject(WHERE, 'options', options, 'an object with `redis`');
  const prefix = options.prefix ?? 'jobhook:sender:';
  if (typeof prefix !== 'string' || /[{}]/.test(prefix))
    throw optionError(WHERE, `prefix must be a string without { or }, got ${describeValue(prefix)}`);
  const jobTtlMs = checkMs(WHERE, 'jobTtlMs', options.jobTtlMs ?? DEFAULT_JOB_TTL_MS);
  const attemptsTtlMs = checkMs(WHERE, 'attemptsTtlMs', options.attemptsTtlMs ?? jobTtlMs);
  return { redis: options.redis, prefix, jobTtlMs, attemptsTtlMs };
}
