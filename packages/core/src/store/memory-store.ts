import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { JobhookError } from '../errors.js';
import type { ClaimResult, Clock, IdempotencyStore, TagNonceBinding, TagNonceStore } from './idempotency-store.js';
import { sameTurnClaims, type StoreClaims } from './store-claims.js';
import {
  checkInteger,
  checkJobId,
  checkMethods,
  checkMs,
  checkTagNonce,
  checkToken,
  MAX_TOKEN_LENGTH,
  readOption,
} from '../internal/option-checks.js';

/** Default of {@link MemoryStoreOptions.max}. */
export const DEFAULT_MEMORY_STORE_MAX = 100_000;
/** Largest {@link MemoryStoreOptions.max}: lru-cache allocates its index arrays for `max` entries up front. */
export const MAX_MEMORY_STORE_MAX = 10_000_000;

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * How many `done` jobs are remembered at most, and as many recipient tag nonces (their bindings
   * to jobs, {@link TagNonceStore}). Default: 100,000.
   *
   * When a new job completes with `max` done jobs remembered, the least recently seen one is
   * forgotten early (before its `ttlMs`): a later duplicate delivery of THAT job is then handled
   * again. Size `max` above the number of jobs completed within one `ttlMs`. Likewise a nonce
   * binding forgotten early lets its tag through once more (on one more job): size `max` above the
   * number of tagged jobs received within `recipientTagMaxAgeMs`.
   *
   * Claims in flight do not count towards `max` and are never evicted: a live lease always holds
   * until it is completed, released or runs out. (Their number is bounded by the handlers running
   * at once; leases that ran out are swept as new claims arrive.)
   */
  max?: number;
  /**
   * Where time comes from (milliseconds, monotonic). Default: `performance` (`performance.now()`).
   * Inject a fake clock to test leases and TTLs without sleeping.
   */
  clock?: Clock;
}

/** A tag nonce's job, and when the binding expires (clock ms). */
interface NonceBinding {
  readonly jobId: string;
  readonly until: number;
}

interface Lease {
  readonly token: string;
  expiresAt: number;
}

const DONE: ClaimResult = Object.freeze({ state: 'done' });
/** Expired leases are swept when this many are held, and then whenever the count doubles. */
const SWEEP_MIN = 1024;

/**
 * Creates an idempotency store in this process's memory: right for one instance; several
 * instances behind a load balancer need a shared store (`createRedisStore` from
 * `@jobhook/core/redis`).
 *
 * Done jobs live in an LRU of at most `max` entries, each until its `ttlMs` runs out (see
 * {@link MemoryStoreOptions.max} for what eviction means); claims in flight live apart, are never
 * evicted, and lapse when their lease runs out. Recipient tag nonces are bound to their first job
 * ({@link TagNonceStore}) in a second LRU of `max`. Everything is forgotten when the process
 * restarts: the done marks, and the nonce bindings (a tag copied before a restart passes once more
 * after it, within its window). A token is the store's random id (a UUID drawn once)
 * and its claim count: unique like a random token, without drawing random bytes on every claim.
 *
 * @example
 * ```ts
 * const store = createMemoryStore({ max: 50_000 });
 * const claim = await store.claim(jobId, { leaseMs: 60_000 });
 * if (claim.state === 'claimed') {
 *   await handle(event);
 *   await store.complete(jobId, claim.token, { ttlMs: 24 * 3_600_000 });
 * }
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` at construction when an option is wrong. Methods
 * reject with `ERR_OPTION_INVALID` on a bad argument and `ERR_STORE_UNAVAILABLE` once closed.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): IdempotencyStore & TagNonceStore {
  const where = 'createMemoryStore';
  const max = checkInteger(where, 'max', readOption(where, options, 'max') ?? DEFAULT_MEMORY_STORE_MAX, {
    min: 1,
    max: MAX_MEMORY_STORE_MAX,
  });
  const clock = checkMethods<Clock>(where, 'clock', readOption(where, options, 'clock') ?? performance, ['now'], 'returning milliseconds');

  // Done jobs: value = when the entry expires (clock ms). Expiry is checked here rather than with
  // lru-cache's own `ttl`, whose staleness test treats a start time of 0 as "no TTL" (a fake clock
  // starting at 0 would never expire) and which arms a timer per read unless ttlResolution is 0.
  const done = new LRUCache<string, number>({ max });
  // Recipient tag nonces → their job, apart from `done` so that neither can evict the other.
  const nonces = new LRUCache<string, NonceBinding>({ max });
  // Claims in flight, apart from `done` so that no amount of completed jobs can evict a live lease.
  const leases = new Map<string, Lease>();
  let sweepAt = SWEEP_MIN;
  let closed = false;
  const tokenPrefix = `${randomUUID()}:`;
  let claimed = 0;

  const now = (): number => clock.now();

  function isDone(jobId: string, at: number): boolean {
    const until = done.get(jobId);
    if (until === undefined) return false;
    if (at < until) return true;
    done.delete(jobId);
    return false;
  }

  /** The lease of `jobId` if it is still live; drops it when it ran out. */
  function liveLease(jobId: string, at: number): Lease | undefined {
    const lease = leases.get(jobId);
    if (lease === undefined) return undefined;
    if (at < lease.expiresAt) return lease;
    leases.delete(jobId);
    return undefined;
  }

  function sweep(at: number): void {
    for (const [jobId, lease] of leases) if (at >= lease.expiresAt) leases.delete(jobId);
    sweepAt = Math.max(SWEEP_MIN, leases.size * 2);
  }

  function checkOpen(operation: string): void {
    if (closed) throw new JobhookError('ERR_STORE_UNAVAILABLE', `memoryStore.${operation}: the store is closed`);
  }

  /** The current lease of `jobId` when `token` is its token, else undefined. */
  function heldLease(jobId: string, token: string, at: number): Lease | undefined {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
    const lease = liveLease(jobId, at);
    return lease !== undefined && lease.token === token ? lease : undefined;
  }

  // The claims themselves, arguments taken as checked: the public methods check them first, the
  // receiver (through sameTurnClaims) checked its options once and validated each job id.
  const claims = {
    claim(jobId: string, leaseMs: number): ClaimResult {
      checkOpen('claim');
      const at = now();
      if (isDone(jobId, at)) return DONE;
      const lease = liveLease(jobId, at);
      if (lease !== undefined) return { state: 'in-flight', retryAfterMs: Math.max(1, Math.ceil(lease.expiresAt - at)) };
      if (leases.size >= sweepAt) sweep(at);
      const token = tokenPrefix + String(++claimed);
      leases.set(jobId, { token, expiresAt: at + leaseMs });
      return { state: 'claimed', token };
    },
    complete(jobId: string, token: string, ttlMs: number): boolean {
      checkOpen('complete');
      const at = now();
      if (heldLease(jobId, token, at) === undefined) return false;
      leases.delete(jobId);
      done.set(jobId, at + ttlMs);
      return true;
    },
    release(jobId: string, token: string): boolean {
      checkOpen('release');
      if (heldLease(jobId, token, now()) === undefined) return false;
      leases.delete(jobId);
      return true;
    },
    bindTagNonce(nonce: string, jobId: string, ttlMs: number): TagNonceBinding {
      checkOpen('bindTagNonce');
      const at = now();
      const bound = nonces.get(nonce);
      if (bound !== undefined && at < bound.until) return bound.jobId === jobId ? 'same' : 'other';
      nonces.set(nonce, { jobId, until: at + ttlMs });
      return 'bound';
    },
  } satisfies StoreClaims;

  const store: IdempotencyStore & TagNonceStore = {
    async claim(jobId: string, claimOptions: { leaseMs: number }): Promise<ClaimResult> {
      checkOpen('claim');
      checkJobId('memoryStore.claim', jobId);
      return claims.claim(jobId, checkMs('memoryStore.claim', 'leaseMs', readOption('memoryStore.claim', claimOptions, 'leaseMs')));
    },

    async complete(jobId: string, token: string, completeOptions: { ttlMs: number }): Promise<boolean> {
      checkOpen('complete');
      checkJobId('memoryStore.complete', jobId);
      checkToken('memoryStore.complete', token);
      const ttlMs = checkMs('memoryStore.complete', 'ttlMs', readOption('memoryStore.complete', completeOptions, 'ttlMs'));
      return claims.complete(jobId, token, ttlMs);
    },

    async release(jobId: string, token: string): Promise<boolean> {
      checkOpen('release');
      checkJobId('memoryStore.release', jobId);
      checkToken('memoryStore.release', token);
      return claims.release(jobId, token);
    },

    async extend(jobId: string, token: string, extendOptions: { leaseMs: number }): Promise<boolean> {
      checkOpen('extend');
      checkJobId('memoryStore.extend', jobId);
      checkToken('memoryStore.extend', token);
      const leaseMs = checkMs('memoryStore.extend', 'leaseMs', readOption('memoryStore.extend', extendOptions, 'leaseMs'));
      const at = now();
      const lease = heldLease(jobId, token, at);
      if (lease === undefined) return false;
      lease.expiresAt = at + leaseMs;
      return true;
    },

    async bindTagNonce(nonce: string, jobId: string, bindOptions: { ttlMs: number }): Promise<TagNonceBinding> {
      checkOpen('bindTagNonce');
      checkTagNonce('memoryStore.bindTagNonce', nonce);
      checkJobId('memoryStore.bindTagNonce', jobId);
      const ttlMs = checkMs('memoryStore.bindTagNonce', 'ttlMs', readOption('memoryStore.bindTagNonce', bindOptions, 'ttlMs'));
      return claims.bindTagNonce(nonce, jobId, ttlMs);
    },

    async close(): Promise<void> {
      closed = true;
      leases.clear();
      done.clear();
      nonces.clear();
    },
  };
  Object.freeze(store);
  sameTurnClaims.offer(store, Object.freeze(claims));
  return store;
}
