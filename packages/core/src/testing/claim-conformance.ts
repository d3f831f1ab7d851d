/**
 * The claim part of the store suite: claim, complete, release and extend, their leases, tokens and
 * done marks, with valid arguments (the refusals of invalid ones are in refusal-conformance.ts).
 */
import { randomUUID } from 'node:crypto';
import type { StoreSuiteContext } from './store-suite-context.js';

/** Registers the tests of claim, complete, release and extend, in the suite's order. */
export function registerClaimTests(ctx: StoreSuiteContext): void {
  const { it, expect, job, pass, passBeyond, expectClaimed } = ctx;

  it('claims a new job with a token', async () => {
    const store = ctx.store();
    const token = expectClaimed(await store.claim(job(), { leaseMs: 10_000 }));
    // Tokens fence stale holders, here and in other processes sharing the store: never the same twice.
    const other = expectClaimed(await store.claim(job(), { leaseMs: 10_000 }));
    expect(other).not.toBe(token);
  });

  it('answers in-flight to a second claim, with 0 < retryAfterMs <= leaseMs', async () => {
    const store = ctx.store();
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
    const store = ctx.store();
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
    const store = ctx.store();
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
    const store = ctx.store();
    const id = job();
    const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
    expect(await store.complete(id, token, { ttlMs: 400 })).toBe(true);
    await pass(150);
    expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
    await passBeyond(250);
    expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
  });

  it('lets the next claim in after release, with a new token', async () => {
    const store = ctx.store();
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
    const store = ctx.store();
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
    const store = ctx.store();
    const id = job();
    const token = expectClaimed(await store.claim(id, { leaseMs: 150 }));
    await passBeyond(150);
    expect(await store.extend(id, token, { leaseMs: 10_000 })).toBe(false);
    expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(false);
    expect(await store.release(id, token)).toBe(false);
    expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
  });

  it('keeps a lease alive past its original expiry with extend', async () => {
    const store = ctx.store();
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
    const store = ctx.store();
    const id = job();
    const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
    expect(await store.extend(id, token, { leaseMs: 150 })).toBe(true); // extend sets, not adds
    await passBeyond(150);
    expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
  });

  it('answers false to a token that is not the current claim, and changes nothing', async () => {
    const store = ctx.store();
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
    const store = ctx.store();
    const id = job();
    const results = await Promise.all(Array.from({ length: 100 }, () => store.claim(id, { leaseMs: 10_000 })));
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.state === 'in-flight')).toHaveLength(99);
  });

  it('keeps different jobs independent', async () => {
    const store = ctx.store();
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
    const store = ctx.store();
    for (const id of [`é☕-${randomUUID()}`, `{brace}-${randomUUID()}`, `a}b{c-${randomUUID()}`, `x:y:${randomUUID()}`, 'z'.repeat(200)]) {
      const token = expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
      expect((await store.claim(id, { leaseMs: 10_000 })).state).toBe('in-flight');
      expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
      expect(await store.claim(id, { leaseMs: 10_000 })).toEqual({ state: 'done' });
    }
    expectClaimed(await store.claim('1', { leaseMs: 10_000 }));
  });
}
