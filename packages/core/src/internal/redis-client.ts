// The ioredis client settings and checks the Redis store and the Redis ledger share.
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { parseRedisUrl } from './index.js';
import { describeValue, optionError } from './store-checks.js';

/**
 * Settings of a client the store makes from a URL: commands issued while (re)connecting wait in
 * the offline queue (so the first requests after start-up are not refused) but are failed at the
 * first failed connection attempt (`maxRetriesPerRequest: 0`) rather than retried; a connection
 * attempt or a silent socket is given up after `timeoutMs`; reconnection goes on forever, at most
 * one second apart, so the store recovers by itself when Redis is back.
 */
export function ownedClientOptions(timeoutMs: number) {
  return {
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
  } satisfies RedisOptions;
}

export function isRedisClient(value: unknown): value is Redis | Cluster {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { defineCommand?: unknown }).defineCommand === 'function' &&
    typeof (value as { status?: unknown }).status === 'string'
  );
}

export function checkRedisUrl(url: string, where: string): void {
  if (parseRedisUrl(url) === undefined) {
    throw optionError(where, `redis must be a redis:// or rediss:// URL (or an ioredis client), got ${describeValue(url)}`);
  }
}
