/**
 * The conformance suite of the {@link IdempotencyStore} contract, for checking a store of your own
 * (and run by jobhook against its memory, Redis and Redis Cluster stores). It registers its tests
 * through the functions you pass in, so it runs under vitest, jest or anything with the same shape,
 * and none of them becomes a dependency of `@jobhook/core`.
 *
 * With a fake clock (the one the store was made with), time moves by `clock.advance`; without one,
 * the suite waits in real time, with short leases and a margin for millisecond-granular expiry
 * (Redis PEXPIRE). Job ids are unique per test, so a shared backend does not leak state between tests.
 *
 * With `tagNonceStore: true` it also checks {@link TagNonceStore} (`bindTagNonce`, the binding of
 * recipient tag nonces to jobs that makes a copied tag useless on a second job): give it when your
 * store implements it, as jobhook's memory, Redis and PostgreSQL stores do.
 *
 * @example
 * ```ts
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest';
 * import { describeStoreConformance } from '@jobhook/core/testing';
 *
 * describeStoreConformance('my store', () => createMyStore(), { describe, it, expect, beforeEach, afterEach });
 * ```
 */
import { randomUUID } from 'node:crypto';
import { isJobhookError, type ErrorCode } from '../errors.js';
import { isTagNonceStore, type ClaimResult, type Clock, type IdempotencyStore, type TagNonceStore } from '../store/idempotency-store.js';

/** The matchers the suite uses; vitest's and jest's `expect(actual)` have them. */
export interface ConformanceMatchers {
  toBe(expected: unknown): unknown;
  toEqual(expected: unknown): unknown;
  toMatch(expected: RegExp): unknown;
  toBeGreaterThan(expected: number): unknown;
  toBeGreaterThanOrEqual(expected: number): unknown;
  toBeLessThanOrEqual(expected: number): unknown;
  toHaveLength(expected: number): unknown;
  not: { toBe(expected: unknown): unknown };
}

/** The test functions the suite registers its tests with: vitest's or jest's (globals or imported). */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
  expect(actual: unknown): ConformanceMatchers;
  beforeEach(hook: () => Promise<void>): unknown;
  afterEach(hook: () => Promise<void>): unknown;
}

/** A clock that moves only when told to: pass it to your store and to the suite. */
export interface FakeClock extends Clock {
  advance(ms: number): void;
}

/** A {@link FakeClock} starting at `start` ms. */
export function createFakeClock(start = 0): FakeClock {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** Options of {@link describeStoreConformance}: the test functions, and the store's fake clock if any. */
export interface StoreConformanceOptions extends ConformanceTestApi {
  /** The fake clock the store was made with; without one the suite waits in real time. */
  clock?: FakeClock;
  /** `true`: the store implements {@link TagNonceStore}, and its tests run too. Default `false`. */
  tagNonceStore?: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The error code a promise rejects with (or 'resolved'). Told by the error's name and code, not by
 * `instanceof`: the store under test may come with another copy of `@jobhook/core` than this suite.
 */
export async function rejectionCode(promise: Promise<unknown>): Promise<ErrorCode | 'resolved' | 'not a JobhookError'> {
  try {
    await promise;
    return 'resolved';
  } catch (err) {
    if (isJobhookError(err)) return err.code as ErrorCode; // a store throws core's codes
    const { name, code } = (err ?? {}) as { name?: unknown; code?: unknown };
    return err instanceof Error && name === 'JobhookError' && typeof code === 'string' ? (code as ErrorCode) : 'not a JobhookError';
  }
}

/** The message a promise rejects with (or 'resolved'). */
async function rejectionMessage(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Registers the contract's tests for a store, with the test functions in `options`. `makeStore` is
 * called before each test (and the store closed after it), so every test starts from a fresh store.
 */
export function describeStoreConformance(
  name: string,
  makeStore: () => IdempotencyStore | Promise<IdempotencyStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it, expect, beforeEach, afterEach, clock, tagNonceStore = false } = options;
  const realTime = clock === undefined;
  /**
   * Lets at least `ms` pass: the fake clock moves, or we sleep. (A timer may fire a fraction of a
   * millisecond early by `performance.now()`, hence the few extra milliseconds in real time.)
   */
  const pass = async (ms: number): Promise<void> => {
    if (clock !== undefined) clock.advance(ms);
    else await sleep(ms + 5);
  };
  /** Passes `ms` and then enough that anything due at `ms` has surely expired. */
  const passBeyond = (ms: number): Promise<void> => pass(realTime ? ms + 40 : ms);

  function expectClaimed(result: ClaimResult): string {
    expect(result.state).toBe('claimed');
    if (result.state !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(result)}`);
    expect(typeof result.token).toBe('string');
    expect(result.token.length).toBeGreaterThanOrEqual(16);
    return result.token;
  }

  describe(`IdempotencyStore conformance: ${name}`, () => {
    let store: IdempotencyStore;
    const job = (): string => `job-${randomUUID()}`;

    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('claims a new job with a token', async () => {
      const token = expectClaimed(await store.claim(job(), { leaseMs: 10_000 }));
      // Tokens fence stale holders, here and in other processes sharing the store: never the same twice.
      const other = expectClaimed(await store.claim(job(), { leaseMs: 10_000 }));
      expect(other).not.toBe(token);
    });

    it('answers in-flight to a second claim, with 0 < retryAfterMs <= leaseMs', async () => {
      const id = job();
      expectClaimed(await store.claim(id, { leaseMs: 5000 }));
      const second = await store.claim(id, { leaseMs: 5000 });
      expect(second.state).toBe('in-flight');
      if (second.state !== 'in-flight') return;
      expect(Number.isInteger(second.retryAfterMs)).toBe(true);
      expect(second.retryAfterMs).toBeGreaterThan(0);
      expect(second.retryAfterMs).toBeLessThanOrEqual(5000);
      // A claim with a longer lease does not stretch the holder's lease.
      const third = await store.claim(id, { leaseMs: 60_000 });
      expect(third.state === 'in-flight' && third.retryAfterMs <= 5000).toBe(true);
    });

    it('counts retryAfterMs down as the lease runs', async () => {
      const id = job();
      expectClaimed(await store.claim(id, { leaseMs: 1000 }));
      await pass(300);
      const later = await store.claim(id, { leaseMs: 1000 });
      expect(later.state).toBe('in-flight');
      if (later.state === 'in-flight') {
        expect(later.retryAfterMs).toBeGreaterThan(0);
        expect(later.retryAfterMs).toBeLessThanOrEqual(700);
      }
    });

    it('answers done after complete, for every later claim', async () => {
      const id = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
      // The token is spent: it can no longer complete, release or extend.
      expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(false);
      expect(await store.release(id, token)).toBe(false);
      expect(await store.extend(id, token, { leaseMs: 10_000 })).toBe(false);
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
    });

    it('forgets a done job after ttlMs', async () => {
      const id = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      expect(await store.complete(id, token, { ttlMs: 400 })).toBe(true);
      await pass(150);
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
      await passBeyond(250);
      expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
    });

    it('lets the next claim in after release, with a new token', async () => {
      const id = job();
      const first = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      expect(await store.release(id, first)).toBe(true);
      expect(await store.release(id, first)).toBe(false);
      const second = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      expect(second).not.toBe(first);
      // The released token does not touch the new claim.
      expect(await store.complete(id, first, { ttlMs: 60_000 })).toBe(false);
      expect((await store.claim(id, { leaseMs: 10_000 })).state).toBe('in-flight');
      expect(await store.complete(id, second, { ttlMs: 60_000 })).toBe(true);
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
    });

    it('lets another claim in when the lease runs out, and fences the stale token', async () => {
      const id = job();
      const stale = expectClaimed(await store.claim(id, { leaseMs: 150 }));
      await passBeyond(150);
      const fresh = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      expect(fresh).not.toBe(stale);
      expect(await store.complete(id, stale, { ttlMs: 60_000 })).toBe(false);
      expect(await store.release(id, stale)).toBe(false);
      expect(await store.extend(id, stale, { leaseMs: 60_000 })).toBe(false);
      // The new holder's claim is untouched by all that.
      const meanwhile = await store.claim(id, { leaseMs: 10_000 });
      expect(meanwhile.state).toBe('in-flight');
      if (meanwhile.state === 'in-flight') expect(meanwhile.retryAfterMs).toBeLessThanOrEqual(10_000);
      expect(await store.complete(id, fresh, { ttlMs: 60_000 })).toBe(true);
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
    });

    it('does not let a holder complete, release or extend after its lease ran out', async () => {
      const id = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 150 }));
      await passBeyond(150);
      expect(await store.extend(id, token, { leaseMs: 10_000 })).toBe(false);
      expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(false);
      expect(await store.release(id, token)).toBe(false);
      expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
    });

    it('keeps a lease alive past its original expiry with extend', async () => {
      const id = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 300 }));
      await pass(150);
      expect(await store.extend(id, token, { leaseMs: 600 })).toBe(true);
      await pass(300); // 450 ms after the claim: past the original 300 ms lease
      const during = await store.claim(id, { leaseMs: 10_000 });
      expect(during.state).toBe('in-flight');
      if (during.state === 'in-flight') expect(during.retryAfterMs).toBeLessThanOrEqual(600);
      expect(await store.extend(id, token, { leaseMs: 600 })).toBe(true);
      expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
    });

    it('lets an extended lease run out too', async () => {
      const id = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      expect(await store.extend(id, token, { leaseMs: 150 })).toBe(true); // extend sets, not adds
      await passBeyond(150);
      expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
    });

    it('answers false to a token that is not the current claim, and changes nothing', async () => {
      const id = job();
      const other = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      const otherToken = expectClaimed(await store.claim(other, { leaseMs: 10_000 }));
      for (const wrong of [randomUUID(), otherToken, '', 'd', `c:${token}`, token.toUpperCase(), 'x'.repeat(10_000)]) {
        expect(await store.complete(id, wrong, { ttlMs: 60_000 })).toBe(false);
        expect(await store.release(id, wrong)).toBe(false);
        expect(await store.extend(id, wrong, { leaseMs: 60_000 })).toBe(false);
      }
      // No claim at all.
      expect(await store.complete(job(), token, { ttlMs: 60_000 })).toBe(false);
      expect(await store.release(job(), token)).toBe(false);
      expect(await store.extend(job(), token, { leaseMs: 60_000 })).toBe(false);
      expect((await store.claim(id, { leaseMs: 10_000 })).state).toBe('in-flight');
      expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
      expect(await store.release(other, otherToken)).toBe(true);
    });

    it('grants exactly one of 100 concurrent claims of one job', async () => {
      const id = job();
      const results = await Promise.all(Array.from({ length: 100 }, () => store.claim(id, { leaseMs: 10_000 })));
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.state === 'in-flight')).toHaveLength(99);
    });

    it('keeps different jobs independent', async () => {
      const a = job();
      const b = job();
      const ta = expectClaimed(await store.claim(a, { leaseMs: 10_000 }));
      const tb = expectClaimed(await store.claim(b, { leaseMs: 10_000 }));
      expect(await store.complete(a, ta, { ttlMs: 60_000 })).toBe(true);
      expect((await store.claim(b, { leaseMs: 10_000 })).state).toBe('in-flight');
      expect(await store.release(b, tb)).toBe(true);
      expect(await store.claim(a, { leaseMs: 10_000 })).toEqual({ state: 'done' });
      expectClaimed(await store.claim(b, { leaseMs: 10_000 }));
      // A job id that is a prefix of another is another job.
      expectClaimed(await store.claim(a.slice(0, -1), { leaseMs: 10_000 }));
    });

    it('takes any job id of 1 to 200 characters (unicode, braces, colons)', async () => {
      for (const id of [
        `é☕-${randomUUID()}`,
        `{brace}-${randomUUID()}`,
        `a}b{c-${randomUUID()}`,
        `x:y:${randomUUID()}`,
        'z'.repeat(200),
      ]) {
        const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
        expect((await store.claim(id, { leaseMs: 10_000 })).state).toBe('in-flight');
        expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
        expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
      }
      expectClaimed(await store.claim('1', { leaseMs: 10_000 }));
    });

    it('rejects an invalid jobId with ERR_OPTION_INVALID', async () => {
      const token = randomUUID();
      for (const bad of ['', 'j'.repeat(201), 42, undefined, null, { id: 'x' }] as unknown as string[]) {
        expect(await rejectionCode(store.claim(bad, { leaseMs: 1000 }))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(store.complete(bad, token, { ttlMs: 1000 }))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(store.release(bad, token))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(store.extend(bad, token, { leaseMs: 1000 }))).toBe('ERR_OPTION_INVALID');
      }
      expect(await rejectionMessage(store.claim('', { leaseMs: 1000 }))).toMatch(
        /jobId must be a non-empty string of at most 200 characters, got ""/,
      );
    });

    it('rejects invalid leaseMs, ttlMs and tokens with ERR_OPTION_INVALID, changing nothing', async () => {
      const id = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      const badMs = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, '1000', undefined, null] as unknown as number[];
      for (const ms of badMs) {
        expect(await rejectionCode(store.claim(job(), { leaseMs: ms }))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(store.complete(id, token, { ttlMs: ms }))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(store.extend(id, token, { leaseMs: ms }))).toBe('ERR_OPTION_INVALID');
      }
      for (const opts of [undefined, null, 1000] as unknown as { leaseMs: number }[]) {
        expect(await rejectionCode(store.claim(job(), opts))).toBe('ERR_OPTION_INVALID');
      }
      for (const badToken of [undefined, null, 123, { token }] as unknown as string[]) {
        expect(await rejectionCode(store.complete(id, badToken, { ttlMs: 1000 }))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(store.release(id, badToken))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(store.extend(id, badToken, { leaseMs: 1000 }))).toBe('ERR_OPTION_INVALID');
      }
      expect(await rejectionMessage(store.claim(job(), { leaseMs: 0 }))).toMatch(
        /leaseMs must be a positive whole number of milliseconds, got 0/,
      );
      // The claim is untouched.
      expect((await store.claim(id, { leaseMs: 10_000 })).state).toBe('in-flight');
      expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
    });

    it('closes idempotently, and refuses work once closed', async () => {
      const id = job();
      const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      await Promise.all([store.close(), store.close()]);
      await store.close();
      expect(await rejectionCode(store.claim(job(), { leaseMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
      expect(await rejectionCode(store.complete(id, token, { ttlMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
      expect(await rejectionCode(store.release(id, token))).toBe('ERR_STORE_UNAVAILABLE');
      expect(await rejectionCode(store.extend(id, token, { leaseMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
    });

    if (!tagNonceStore) return;
    const nonce = (): string => randomUUID().replaceAll('-', '').slice(0, 22);
    const nonces = (): TagNonceStore => {
      expect(isTagNonceStore(store)).toBe(true);
      return store as IdempotencyStore & TagNonceStore;
    };

    it('binds a tag nonce to its first job: bound, then same for that job and other for any other', async () => {
      const tags = nonces();
      const [n, a, b] = [nonce(), job(), job()];
      expect(await tags.bindTagNonce(n, a, { ttlMs: 60_000 })).toBe('bound');
      expect(await tags.bindTagNonce(n, a, { ttlMs: 60_000 })).toBe('same');
      expect(await tags.bindTagNonce(n, b, { ttlMs: 60_000 })).toBe('other');
      // The first job keeps it: asking for another job changed nothing.
      expect(await tags.bindTagNonce(n, a, { ttlMs: 60_000 })).toBe('same');
      expect(await tags.bindTagNonce(n, b, { ttlMs: 60_000 })).toBe('other');
      // Job ids are compared exactly: the receiver hands them over in lower case.
      expect(await tags.bindTagNonce(n, a.toUpperCase(), { ttlMs: 60_000 })).toBe('other');
      // Another nonce, even a prefix of this one, is free.
      expect(await tags.bindTagNonce(n.slice(0, -1), b, { ttlMs: 60_000 })).toBe('bound');
      expect(await tags.bindTagNonce(nonce(), a, { ttlMs: 60_000 })).toBe('bound');
    });

    it('keeps a binding whatever becomes of the job: released, completed, forgotten', async () => {
      const tags = nonces();
      const [n, a, b] = [nonce(), job(), job()];
      expect(await tags.bindTagNonce(n, a, { ttlMs: 60_000 })).toBe('bound');
      const first = expectClaimed(await store.claim(a, { leaseMs: 10_000 }));
      expect(await store.release(a, first)).toBe(true); // a failed handler
      expect(await tags.bindTagNonce(n, b, { ttlMs: 60_000 })).toBe('other');
      const second = expectClaimed(await store.claim(a, { leaseMs: 10_000 }));
      expect(await store.complete(a, second, { ttlMs: 100 })).toBe(true);
      await passBeyond(100); // the done mark is gone; the binding is not
      expectClaimed(await store.claim(a, { leaseMs: 10_000 }));
      expect(await tags.bindTagNonce(n, b, { ttlMs: 60_000 })).toBe('other');
      expect(await tags.bindTagNonce(n, a, { ttlMs: 60_000 })).toBe('same');
    });

    it('keeps nonces and job ids apart, even with the same text', async () => {
      const tags = nonces();
      const id = job();
      expect(await tags.bindTagNonce(id, job(), { ttlMs: 60_000 })).toBe('bound');
      expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      const other = job();
      expectClaimed(await store.claim(other, { leaseMs: 10_000 }));
      expect(await tags.bindTagNonce(other, job(), { ttlMs: 60_000 })).toBe('bound');
    });

    it('forgets a binding after ttlMs, not before', async () => {
      const tags = nonces();
      const [n, a, b] = [nonce(), job(), job()];
      expect(await tags.bindTagNonce(n, a, { ttlMs: 400 })).toBe('bound');
      await pass(150);
      expect(await tags.bindTagNonce(n, b, { ttlMs: 400 })).toBe('other');
      // A repeated binding of the same job does not stretch it.
      expect(await tags.bindTagNonce(n, a, { ttlMs: 60_000 })).toBe('same');
      await passBeyond(250);
      expect(await tags.bindTagNonce(n, b, { ttlMs: 60_000 })).toBe('bound');
      expect(await tags.bindTagNonce(n, a, { ttlMs: 60_000 })).toBe('other');
    });

    it('binds a nonce to exactly one of 50 jobs asking at once', async () => {
      const tags = nonces();
      const n = nonce();
      const ids = Array.from({ length: 50 }, job);
      const results = await Promise.all(ids.map((id) => tags.bindTagNonce(n, id, { ttlMs: 60_000 })));
      expect(results.filter((r) => r === 'bound')).toHaveLength(1);
      expect(results.filter((r) => r === 'other')).toHaveLength(49);
      const winner = ids[results.indexOf('bound')] as string;
      expect(await tags.bindTagNonce(n, winner, { ttlMs: 60_000 })).toBe('same');
    });

    it('rejects a bad nonce, jobId or ttlMs with ERR_OPTION_INVALID, and works no more once closed', async () => {
      const tags = nonces();
      const n = nonce();
      for (const bad of ['', 'n'.repeat(201), 42, undefined, null] as unknown as string[]) {
        expect(await rejectionCode(tags.bindTagNonce(bad, job(), { ttlMs: 1000 }))).toBe('ERR_OPTION_INVALID');
        expect(await rejectionCode(tags.bindTagNonce(n, bad, { ttlMs: 1000 }))).toBe('ERR_OPTION_INVALID');
      }
      for (const ms of [0, -1, 1.5, Number.NaN, '1000', undefined] as unknown as number[]) {
        expect(await rejectionCode(tags.bindTagNonce(n, job(), { ttlMs: ms }))).toBe('ERR_OPTION_INVALID');
      }
      expect(await rejectionCode(tags.bindTagNonce(n, job(), undefined as unknown as { ttlMs: number }))).toBe('ERR_OPTION_INVALID');
      // Nothing was bound by the refused calls.
      expect(await tags.bindTagNonce(n, job(), { ttlMs: 60_000 })).toBe('bound');
      await store.close();
      expect(await rejectionCode(tags.bindTagNonce(nonce(), job(), { ttlMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
    });
  });
}
