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
import type { ClaimResult, IdempotencyStore, TagNonceStore } from '../store/idempotency-store.js';
import { registerClaimTests } from './claim-conformance.js';
import type { ConformanceTestApi, FakeClock } from './conformance-api.js';
import { registerRefusalTests } from './refusal-conformance.js';
import type { StoreSuiteContext } from './store-suite-context.js';
import { registerTagNonceTests } from './tag-nonce-conformance.js';

/** Options of {@link describeStoreConformance}: the test functions, and the store's fake clock if any. */
export interface StoreConformanceOptions extends ConformanceTestApi {
  /** The fake clock the store was made with; without one the suite waits in real time. */
  clock?: FakeClock;
  /** `true`: the store implements {@link TagNonceStore}, and its tests run too. Default `false`. */
  tagNonceStore?: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const ctx: StoreSuiteContext = {
      it,
      expect,
      store: () => store,
      job: () => `job-${randomUUID()}`,
      pass,
      passBeyond,
      expectClaimed,
    };
    // The parts register in this order, which is the order the tests run and are reported in.
    registerClaimTests(ctx);
    registerRefusalTests(ctx);
    if (tagNonceStore) registerTagNonceTests(ctx);
  });
}
