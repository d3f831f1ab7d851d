import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { JobhookError } from '../errors.js';
import { quitRedisClient } from '../internal/quit-redis-client.js';
import { storeClientFromOption } from '../internal/redis-client.js';
import type { Clock } from '../store/idempotency-store.js';
import type { JobLedger, LeasedEntry, LedgerCounts } from './job-ledger.js';
import { ledgerArgs, resolveRedisLedgerOptions } from './ledger-option-checks.js';

/** Options of {@link createRedisLedger}. */
export interface RedisLedgerOptions {
  /** An ioredis `Redis` or `Cluster` client (it stays yours), or a `redis://` / `rediss://` URL (the ledger's own client, quit on close). */
  redis: Redis | Cluster | string;
  /**
   * Prefix of the ledger's keys: `${keyPrefix}{ledger}:due` (a sorted set of keys by due time),
   * `…:jobs` (a hash of job id → key) and `…:e:<key>` (one hash per entry). The `{ledger}` hash tag
   * keeps them in one Cluster slot, so every operation is one atomic script. Default `'jobhook:'`.
   */
  keyPrefix?: string;
  /** Longest wait for one operation, ms; past it the operation rejects with `ERR_STORE_UNAVAILABLE`. Default 2000. */
  operationTimeoutMs?: number;
  /** Where time comes from: `now()` in ms since the epoch. Default `Date`. */
  clock?: Clock;
}

// KEYS[1] = due (ZSET key → dueAt), KEYS[2] = jobs (HASH jobId → key); ARGV[1] = the entries' key
// prefix. An entry hash holds c (createdAt), a (attempts), j (job id), t (lease token).

/** begin(key, dueAt, createdAt) → 1 written | 0 present. */
const BEGIN_LUA = `
local e = ARGV[1] .. ARGV[2]
if redis.call('EXISTS', e) == 1 then return 0 end
redis.call('HSET', e, 'c', ARGV[4], 'a', 0)
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return 1
`;

/** attach(key, jobId, dueAt or '', now) → 1. Writes a missing entry. */
const ATTACH_LUA = `
local e = ARGV[1] .. ARGV[2]
if redis.call('EXISTS', e) == 0 then
  redis.call('HSET', e, 'c', ARGV[5], 'a', 0)
  if ARGV[4] == '' then redis.call('ZADD', KEYS[1], ARGV[5], ARGV[2]) end
end
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2]) end
local old = redis.call('HGET', e, 'j')
if old and old ~= ARGV[3] and redis.call('HGET', KEYS[2], old) == ARGV[2] then redis.call('HDEL', KEYS[2], old) end
redis.call('HSET', e, 'j', ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
return 1
`;

/** Removes entry ARGV[2] (when ARGV[3] is given, only while its lease token is ARGV[3]) → 1 | 0. */
const REMOVE_LUA = `
local e = ARGV[1] .. ARGV[2]
if redis.call('EXISTS', e) == 0 then return 0 end
if ARGV[3] ~= '' and redis.call('HGET', e, 't') ~= ARGV[3] then return 0 end
local j = redis.call('HGET', e, 'j')
if j and redis.call('HGET', KEYS[2], j) == ARGV[2] then redis.call('HDEL', KEYS[2], j) end
redis.call('DEL', e)
redis.call('ZREM', KEYS[1], ARGV[2])
return 1
`;

/** settle(jobId) → 1 | 0. */
const SETTLE_LUA = `
local k = redis.call('HGET', KEYS[2], ARGV[2])
if not k then return 0 end
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('DEL', ARGV[1] .. k)
redis.call('ZREM', KEYS[1], k)
return 1
`;

/** lease(now, limit, leaseMs, tokenBase) → {{key, jobId or '', createdAt, attempts, token}, …}. */
const LEASE_LUA = `
local keys = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local until_ms = tonumber(ARGV[2]) + tonumber(ARGV[4])
local out = {}
for i, k in ipairs(keys) do
  local e = ARGV[1] .. k
  if redis.call('EXISTS', e) == 0 then
    redis.call('ZREM', KEYS[1], k)
  else
    local token = ARGV[5] .. ':' .. i
    redis.call('ZADD', KEYS[1], string.format('%.0f', until_ms), k)
    redis.call('HSET', e, 't', token)
    local f = redis.call('HMGET', e, 'j', 'c', 'a')
    out[#out + 1] = {k, f[1] or '', f[2] or '0', f[3] or '0', token}
  end
end
return out
`;

/** reschedule(key, token, dueAt) → 1 | 0. */
const RESCHEDULE_LUA = `
local e = ARGV[1] .. ARGV[2]
if redis.call('HGET', e, 't') ~= ARGV[3] then return 0 end
redis.call('HDEL', e, 't')
redis.call('HINCRBY', e, 'a', 1)
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
return 1
`;

/** count() → {entries, attached}. */
const COUNT_LUA = `
return {redis.call('ZCARD', KEYS[1]), redis.call('HLEN', KEYS[2])}
`;

const COMMANDS = {
  jobhookLedgerBeginV1: BEGIN_LUA,
  jobhookLedgerAttachV1: ATTACH_LUA,
  jobhookLedgerRemoveV1: REMOVE_LUA,
  jobhookLedgerSettleV1: SETTLE_LUA,
  jobhookLedgerLeaseV1: LEASE_LUA,
  jobhookLedgerRescheduleV1: RESCHEDULE_LUA,
  jobhookLedgerCountV1: COUNT_LUA,
} as const;

type Scripted = Record<keyof typeof COMMANDS, (due: string, jobs: string, ...args: Array<string | number>) => Promise<unknown>>;

/**
 * An expected-jobs ledger in Redis, shared by every instance on the same Redis and `keyPrefix`.
 * Each operation is one atomic Lua script over the ledger's keys (one Cluster slot), so a lease is
 * taken by one caller only: one poller per job across instances. Entries live until settled,
 * discarded or abandoned (no expiry: the reconciler's horizon ends them); Redis persistence (AOF or
 * RDB) decides what survives a Redis restart.
 *
 * @example
 * ```ts
 * import { createRedisLedger, createRedisStore } from '@jobhook/core/redis';
 * const ledger = createRedisLedger({ redis: process.env.REDIS_URL! });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when an option is wrong. Methods reject with
 * `ERR_OPTION_INVALID` on a bad argument and `ERR_STORE_UNAVAILABLE` when Redis fails or does not answer in time.
 */
export function createRedisLedger(options: RedisLedgerOptions): JobLedger {
  const where = 'createRedisLedger';
  const { redis, keyPrefix, timeoutMs, now } = resolveRedisLedgerOptions(options);
  const args = ledgerArgs('redisLedger');
  const { client, owned } = storeClientFromOption(where, redis, timeoutMs);
  // Failures reach the caller as ERR_STORE_UNAVAILABLE; an unhandled 'error' event would end the process.
  if (owned) client.on('error', () => undefined);
  for (const [name, lua] of Object.entries(COMMANDS)) client.defineCommand(name, { numberOfKeys: 2, lua });
  const scripted = client as unknown as Scripted;
  const base = `${keyPrefix}{ledger}:`;
  const due = `${base}due`;
  const jobs = `${base}jobs`;
  const entryPrefix = `${base}e:`;
  let closing: Promise<void> | undefined;

  /** One script, bounded by `timeoutMs`; every failure is `ERR_STORE_UNAVAILABLE`. */
  function call(operation: string, name: keyof typeof COMMANDS, ...args: Array<string | number>): Promise<unknown> {
    if (closing !== undefined)
      return Promise.reject(new JobhookError('ERR_STORE_UNAVAILABLE', `redisLedger.${operation}: the ledger is closed`));
    const unavailable = (reason: string, cause?: unknown): JobhookError =>
      new JobhookError('ERR_STORE_UNAVAILABLE', `ledger unavailable: Redis ${operation} failed: ${reason}`, {
        cause,
        detail: { operation },
      });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(unavailable(`no answer in ${timeoutMs} ms (connection ${client.status})`)), timeoutMs);
      let pending: Promise<unknown>;
      try {
        pending = scripted[name](due, jobs, entryPrefix, ...args);
      } catch (err) {
        clearTimeout(timer);
        reject(unavailable(err instanceof Error ? err.message : String(err), err));
        return;
      }
      pending.then(
        (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(unavailable(err instanceof Error ? err.message : String(err), err));
        },
      );
    });
  }

  return Object.freeze({
    async begin(key: string, beginOptions: { dueAt: number }): Promise<void> {
      const dueAt = args.begin(key, beginOptions);
      await call('begin', 'jobhookLedgerBeginV1', key, dueAt, now());
    },
    async attach(key: string, jobId: string, attachOptions: { dueAt?: number } = {}): Promise<void> {
      const dueAt = args.attach(key, jobId, attachOptions) ?? '';
      await call('attach', 'jobhookLedgerAttachV1', key, jobId.toLowerCase(), dueAt, now());
    },
    async discard(key: string): Promise<boolean> {
      args.discard(key);
      return (await call('discard', 'jobhookLedgerRemoveV1', key, '')) === 1;
    },
    async settle(jobId: string): Promise<boolean> {
      args.settle(jobId);
      return (await call('settle', 'jobhookLedgerSettleV1', jobId.toLowerCase())) === 1;
    },
    async lease(leaseOptions: { limit: number; leaseMs: number }): Promise<LeasedEntry[]> {
      const { limit, leaseMs } = args.lease(leaseOptions);
      const at = now();
      const reply = await call('lease', 'jobhookLedgerLeaseV1', at, limit, leaseMs, randomUUID());
      if (!Array.isArray(reply)) throw new JobhookError('ERR_STORE_UNAVAILABLE', 'redisLedger.lease: unexpected reply');
      return (reply as Array<[string, string, string, string, string]>).map(([key, jobId, createdAt, attempts, token]) => ({
        key,
        jobId: jobId === '' ? null : jobId,
        createdAt: Number(createdAt),
        dueAt: at + leaseMs,
        attempts: Number(attempts),
        token,
      }));
    },
    async reschedule(key: string, token: string, rescheduleOptions: { dueAt: number }): Promise<boolean> {
      const dueAt = args.reschedule(key, token, rescheduleOptions);
      return (await call('reschedule', 'jobhookLedgerRescheduleV1', key, token, dueAt)) === 1;
    },
    async abandon(key: string, token: string): Promise<boolean> {
      args.abandon(key, token);
      // An empty token would remove unconditionally: no lease has one.
      if (token === '') return false;
      return (await call('abandon', 'jobhookLedgerRemoveV1', key, token)) === 1;
    },
    async count(): Promise<LedgerCounts> {
      const reply = await call('count', 'jobhookLedgerCountV1');
      const [entries, attached] = Array.isArray(reply) ? (reply as number[]) : [0, 0];
      return { attached: Number(attached), unattached: Number(entries) - Number(attached) };
    },
    close(): Promise<void> {
      closing ??= owned ? quitRedisClient(client as Redis, timeoutMs) : Promise.resolve();
      return closing;
    },
  });
}
