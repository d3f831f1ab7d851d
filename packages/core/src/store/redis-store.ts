/**
 * `@jobhook/core/redis`: the Redis idempotency store and expected-jobs ledger. A subpath of its own so that the main entry
 * never loads `ioredis` (an optional peer dependency).
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { JobhookError } from '../errors.js';
import { checkJobId, checkMs, checkTagNonce, checkToken, MAX_TOKEN_LENGTH, readOption } from '../internal/option-checks.js';
import { quitRedisClient, storeClientFromOption } from '../internal/redis-client.js';
import { resolveRedisOptions } from '../internal/redis-option-checks.js';
import type { ClaimResult, IdempotencyStore, TagNonceBinding, TagNonceStore } from './idempotency-store.js';

export type { ClaimResult, IdempotencyStore, TagNonceBinding, TagNonceStore } from './idempotency-store.js';

/** Default of {@link RedisStoreOptions.keyPrefix}. */
export const DEFAULT_REDIS_KEY_PREFIX = 'jobhook:';
// The operation timeout's default and the key prefix's longest length, shared with the Redis ledger.
export { DEFAULT_OPERATION_TIMEOUT_MS, MAX_KEY_PREFIX_LENGTH } from '../internal/redis-option-checks.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /**
   * An ioredis `Redis` or `Cluster` client, or a `redis://` / `rediss://` URL.
   *
   * A client you pass stays yours: the store defines its five `jobhook*V1` script commands on it
   * and never closes it. From a URL the store makes its own client, which fails commands at the
   * first failed reconnection instead of queueing them, reconnects forever in the background, and
   * is quit by {@link IdempotencyStore.close}.
   */
  redis: Redis | Cluster | string;
  /**
   * Prefix of every key; a job's key is `${keyPrefix}{${jobId}}`, the braces making the job id the
   * Redis Cluster hash tag, and a recipient tag nonce's is `${keyPrefix}tag:{${nonce}}`. Must not
   * contain `{` or `}`. Default: `'jobhook:'`.
   */
  keyPrefix?: string;
  /**
   * Longest wait for one operation, in milliseconds; past it the operation rejects with
   * `ERR_STORE_UNAVAILABLE`. Default: 2000.
   */
  operationTimeoutMs?: number;
}

// One key per job. Its value is `c:<token>` while claimed (PX = the lease) and `d` once done
// (PX = the done TTL); a missing key means "never seen, or forgotten": claimable. The `c:` prefix
// keeps a caller's token from ever equalling the `d` marker. Each script is one round trip; ioredis
// sends EVALSHA and falls back to EVAL when the server does not know the script (after a restart).

/** claim(KEYS[1], token, leaseMs) → {1} claimed | {2, pttl} in flight | {3} done. */
const CLAIM_LUA = `
if redis.call('SET', KEYS[1], 'c:' .. ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1}
end
if redis.call('GET', KEYS[1]) == 'd' then
  return {3}
end
return {2, redis.call('PTTL', KEYS[1])}
`;

/** complete(KEYS[1], token, ttlMs) → 1 when the claim was the caller's (now done), else 0. */
const COMPLETE_LUA = `
if redis.call('GET', KEYS[1]) == 'c:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'd', 'PX', ARGV[2])
  return 1
end
return 0
`;

/** release(KEYS[1], token) → 1 when the claim was the caller's (now deleted), else 0. */
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == 'c:' .. ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

/** extend(KEYS[1], token, leaseMs) → 1 when the claim was the caller's (lease now leaseMs from now), else 0. */
const EXTEND_LUA = `
if redis.call('GET', KEYS[1]) == 'c:' .. ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/**
 * bindTagNonce(KEYS[1], jobId, ttlMs) → 1 bound now | 2 bound to this job already | 3 bound to
 * another. The key holds the job id (PX = the binding's life); SET NX makes the first caller win.
 */
const BIND_NONCE_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 2
end
return 3
`;

const COMMANDS = {
  jobhookClaimV1: CLAIM_LUA,
  jobhookCompleteV1: COMPLETE_LUA,
  jobhookReleaseV1: RELEASE_LUA,
  jobhookExtendV1: EXTEND_LUA,
  jobhookBindTagNonceV1: BIND_NONCE_LUA,
} as const;

/** The client once the scripts are defined on it. */
interface ScriptedClient {
  jobhookClaimV1(key: string, token: string, leaseMs: number): Promise<unknown>;
  jobhookCompleteV1(key: string, token: string, ttlMs: number): Promise<unknown>;
  jobhookReleaseV1(key: string, token: string): Promise<unknown>;
  jobhookExtendV1(key: string, token: string, leaseMs: number): Promise<unknown>;
  jobhookBindTagNonceV1(key: string, jobId: string, ttlMs: number): Promise<unknown>;
}

type Operation = 'claim' | 'complete' | 'release' | 'extend' | 'bindTagNonce';

const DONE: ClaimResult = Object.freeze({ state: 'done' });

/**
 * Creates an idempotency store on Redis (a single server or a Redis Cluster), shared by every
 * receiver instance that uses the same Redis and `keyPrefix`. Each operation is one atomic Lua
 * script on one key, so it is one round trip and cluster-safe. It binds recipient tag nonces to
 * their first job too ({@link TagNonceStore}), one key per nonce.
 *
 * Failures: when Redis cannot be reached, errors, or does not answer within `operationTimeoutMs`,
 * the operation rejects with `ERR_STORE_UNAVAILABLE` (503; the Redis error as `cause`) — it never
 * hangs and never answers `claimed` it did not get. When Redis is back, the same store works again.
 * An operation that timed out may still reach Redis later; a late claim then holds its job for
 * `leaseMs` (deliveries meanwhile answer "in flight"), never runs it twice.
 *
 * @example
 * ```ts
 * import { createRedisStore } from '@jobhook/core/redis';
 * const store = createRedisStore({ redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
 * const receiver = createReceiver({ keys, store, onEvent });
 * // on shutdown: await store.close();
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` at construction when an option is wrong. Methods
 * reject with `ERR_OPTION_INVALID` on a bad argument and `ERR_STORE_UNAVAILABLE` as above.
 */
export function createRedisStore(options: RedisStoreOptions): IdempotencyStore & TagNonceStore {
  const where = 'createRedisStore';
  const { redis, keyPrefix, timeoutMs } = resolveRedisOptions(where, options, DEFAULT_REDIS_KEY_PREFIX);

  const { client, owned } = storeClientFromOption(where, redis, timeoutMs);
  /** The last connection error of a client the store owns, told with timeouts. */
  let lastError: Error | undefined;
  if (owned) {
    client.on('error', (err: Error) => {
      lastError = err;
    });
    client.on('ready', () => {
      lastError = undefined;
    });
  }
  for (const [name, lua] of Object.entries(COMMANDS)) client.defineCommand(name, { numberOfKeys: 1, lua });
  const scripted = client as unknown as ScriptedClient;

  let closing: Promise<void> | undefined;

  const keyOf = (jobId: string): string => `${keyPrefix}{${jobId}}`;

  function checkOpen(operation: Operation): void {
    if (closing !== undefined) throw new JobhookError('ERR_STORE_UNAVAILABLE', `redisStore.${operation}: the store is closed`);
  }

  /**
   * Runs one script, bounded by `timeoutMs`, mapping every failure to `ERR_STORE_UNAVAILABLE`.
   * The command's own promise always gets a rejection handler, so a late failure (after the
   * timeout) is never an unhandled rejection.
   */
  function run<T>(operation: Operation, jobId: string, send: () => Promise<unknown>, read: (reply: unknown) => T | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const fail = (reason: string, cause: unknown): void => {
        settled = true;
        reject(
          new JobhookError('ERR_STORE_UNAVAILABLE', `idempotency store unavailable: Redis ${operation} failed: ${reason}`, {
            cause,
            detail: { operation, jobId },
          }),
        );
      };
      const timer = setTimeout(() => {
        if (settled) return;
        const state = `connection ${client.status}${lastError === undefined ? '' : `, last error: ${lastError.message}`}`;
        fail(`no answer in ${timeoutMs} ms (${state})`, lastError ?? new Error(`timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      let pending: Promise<unknown>;
      try {
        pending = send();
      } catch (err) {
        clearTimeout(timer);
        fail(messageOf(err), err);
        return;
      }
      pending.then(
        (reply) => {
          if (settled) return;
          clearTimeout(timer);
          const value = read(reply);
          if (value === undefined) fail(`unexpected reply ${describeReply(reply)}`, undefined);
          else {
            settled = true;
            resolve(value);
          }
        },
        (err: unknown) => {
          if (settled) return;
          clearTimeout(timer);
          fail(messageOf(err), err);
        },
      );
    });
  }

  return Object.freeze({
    async claim(jobId: string, claimOptions: { leaseMs: number }): Promise<ClaimResult> {
      checkOpen('claim');
      checkJobId('redisStore.claim', jobId);
      const leaseMs = checkMs('redisStore.claim', 'leaseMs', readOption('redisStore.claim', claimOptions, 'leaseMs'));
      const token = randomUUID();
      return run(
        'claim',
        jobId,
        () => scripted.jobhookClaimV1(keyOf(jobId), token, leaseMs),
        (reply): ClaimResult | undefined => {
          if (!Array.isArray(reply)) return undefined;
          switch (reply[0]) {
            case 1:
              return { state: 'claimed', token };
            case 3:
              return DONE;
            case 2: {
              const pttl = reply[1];
              if (typeof pttl !== 'number') return undefined;
              // -1 (a key without expiry, which this store never writes) waits one lease.
              return { state: 'in-flight', retryAfterMs: pttl > 0 ? pttl : pttl === -1 ? leaseMs : 1 };
            }
            default:
              return undefined;
          }
        },
      );
    },

    async complete(jobId: string, token: string, completeOptions: { ttlMs: number }): Promise<boolean> {
      checkOpen('complete');
      checkJobId('redisStore.complete', jobId);
      checkToken('redisStore.complete', token);
      const ttlMs = checkMs('redisStore.complete', 'ttlMs', readOption('redisStore.complete', completeOptions, 'ttlMs'));
      if (!plausibleToken(token)) return false;
      return run('complete', jobId, () => scripted.jobhookCompleteV1(keyOf(jobId), token, ttlMs), readFlag);
    },

    async release(jobId: string, token: string): Promise<boolean> {
      checkOpen('release');
      checkJobId('redisStore.release', jobId);
      checkToken('redisStore.release', token);
      if (!plausibleToken(token)) return false;
      return run('release', jobId, () => scripted.jobhookReleaseV1(keyOf(jobId), token), readFlag);
    },

    async extend(jobId: string, token: string, extendOptions: { leaseMs: number }): Promise<boolean> {
      checkOpen('extend');
      checkJobId('redisStore.extend', jobId);
      checkToken('redisStore.extend', token);
      const leaseMs = checkMs('redisStore.extend', 'leaseMs', readOption('redisStore.extend', extendOptions, 'leaseMs'));
      if (!plausibleToken(token)) return false;
      return run('extend', jobId, () => scripted.jobhookExtendV1(keyOf(jobId), token, leaseMs), readFlag);
    },

    async bindTagNonce(nonce: string, jobId: string, bindOptions: { ttlMs: number }): Promise<TagNonceBinding> {
      checkOpen('bindTagNonce');
      checkTagNonce('redisStore.bindTagNonce', nonce);
      checkJobId('redisStore.bindTagNonce', jobId);
      const ttlMs = checkMs('redisStore.bindTagNonce', 'ttlMs', readOption('redisStore.bindTagNonce', bindOptions, 'ttlMs'));
      return run('bindTagNonce', jobId, () => scripted.jobhookBindTagNonceV1(`${keyPrefix}tag:{${nonce}}`, jobId, ttlMs), readBinding);
    },

    close(): Promise<void> {
      closing ??= owned ? quitRedisClient(client as Redis, timeoutMs) : Promise.resolve();
      return closing;
    },
  });
}

/** A token this store could have issued; any other cannot match, so no round trip is needed. */
function plausibleToken(token: string): boolean {
  return token.length > 0 && token.length <= MAX_TOKEN_LENGTH;
}

function readFlag(reply: unknown): boolean | undefined {
  return reply === 1 ? true : reply === 0 ? false : undefined;
}

const BINDINGS: readonly (TagNonceBinding | undefined)[] = [undefined, 'bound', 'same', 'other'];

function readBinding(reply: unknown): TagNonceBinding | undefined {
  return typeof reply === 'number' ? BINDINGS[reply] : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function describeReply(reply: unknown): string {
  try {
    return JSON.stringify(reply)?.slice(0, 80) ?? String(reply);
  } catch {
    return typeof reply;
  }
}
