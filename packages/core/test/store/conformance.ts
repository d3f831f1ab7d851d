// The IdempotencyStore conformance suite is published for users' own stores
// (`@jobhook/core/testing`, src/testing/store-conformance.ts); jobhook's store tests run it through
// this wrapper, with vitest's functions injected.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../../src/store/idempotency-store.js';
import { describeStoreConformance as describeWith, type FakeClock } from '../../src/testing/index.js';

export { createFakeClock, rejectionCode, type FakeClock } from '../../src/testing/index.js';

export interface ConformanceOptions {
  /** The fake clock the store was made with; without one the suite waits in real time. */
  clock?: FakeClock;
  /** The store implements TagNonceStore: its tests run too. */
  tagNonceStore?: boolean;
}

/** Registers the contract's tests for a store, under vitest. */
export function describeStoreConformance(
  name: string,
  makeStore: () => IdempotencyStore | Promise<IdempotencyStore>,
  options: ConformanceOptions = {},
): void {
  describeWith(name, makeStore, { describe, it, expect, beforeEach, afterEach, ...options });
}
