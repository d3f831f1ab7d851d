/**
 * The refusal part of the store suite: invalid job ids, leases, ttls, options and tokens are
 * refused with ERR_OPTION_INVALID (and change nothing), and a closed store refuses all work with
 * ERR_STORE_UNAVAILABLE.
 */
import { randomUUID } from 'node:crypto';
import { rejectionCode } from './conformance-api.js';
import type { StoreSuiteContext } from './store-suite-context.js';

/** The message a promise rejects with (or 'resolved'). */
async function rejectionMessage(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Registers the tests of what a store refuses: invalid arguments, then any work once closed. */
export function registerRefusalTests(ctx: StoreSuiteContext): void {
  const { it, expect, job, expectClaimed } = ctx;

  it('rejects an invalid jobId with ERR_OPTION_INVALID', async () => {
    const store = ctx.store();
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
    const store = ctx.store();
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
    const store = ctx.store();
    const id = job();
    const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
    await Promise.all([store.close(), store.close()]);
    await store.close();
    expect(await rejectionCode(store.claim(job(), { leaseMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
    expect(await rejectionCode(store.complete(id, token, { ttlMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
    expect(await rejectionCode(store.release(id, token))).toBe('ERR_STORE_UNAVAILABLE');
    expect(await rejectionCode(store.extend(id, token, { leaseMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
  });
}
