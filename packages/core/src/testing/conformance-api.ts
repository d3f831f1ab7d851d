/**
 * What the store and ledger conformance suites share: the shape of the test functions they are
 * given (so neither vitest nor jest becomes a dependency of `@jobhook/core`), the fake clock, and
 * how a refusal is told from a resolution.
 */
import { isJobhookError, type ErrorCode } from '../errors.js';
import type { Clock } from '../store/idempotency-store.js';

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
