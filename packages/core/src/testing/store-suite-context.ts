/**
 * What `describeStoreConformance` hands to the parts of the store suite (claims, refusals, tag
 * nonces), so each part lives in a file of its own and registers its tests in the suite's order.
 */
import type { ClaimResult, IdempotencyStore } from '../store/idempotency-store.js';
import type { ConformanceTestApi } from './conformance-api.js';

/** The test functions, the running test's store, and the helpers every part of the store suite uses. */
export interface StoreSuiteContext {
  it: ConformanceTestApi['it'];
  expect: ConformanceTestApi['expect'];
  /**
   * The running test's store. A function, not a value: each test gets a fresh store (made in
   * `beforeEach`), so it must be read inside the test, never while registering.
   */
  store(): IdempotencyStore;
  /** A new job id: unique per call, so a backend shared between tests does not leak state between them. */
  job(): string;
  /** Lets at least `ms` pass: the fake clock moves, or the test sleeps. */
  pass(ms: number): Promise<void>;
  /** Passes `ms` and then enough that anything due at `ms` has surely expired. */
  passBeyond(ms: number): Promise<void>;
  /** Checks that a claim was granted, with a token of 16 characters or more, and returns the token. */
  expectClaimed(result: ClaimResult): string;
}
