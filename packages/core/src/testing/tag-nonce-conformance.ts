/**
 * The tag nonce part of the store suite: {@link TagNonceStore} (`bindTagNonce`), which binds a
 * recipient tag's nonce to the first job it came with, so a copied tag is useless on a second job.
 * Only for stores that implement it (`tagNonceStore: true`).
 */
import { randomUUID } from 'node:crypto';
import { isTagNonceStore, type IdempotencyStore, type TagNonceStore } from '../store/idempotency-store.js';
import { rejectionCode } from './conformance-api.js';
import type { StoreSuiteContext } from './store-suite-context.js';

/** Registers the tests of `bindTagNonce`; the store must implement {@link TagNonceStore}. */
export function registerTagNonceTests(ctx: StoreSuiteContext): void {
  const { it, expect, job, pass, passBeyond, expectClaimed } = ctx;
  const nonce = (): string => randomUUID().replaceAll('-', '').slice(0, 22);
  /** The store as a TagNonceStore, checked first: a store without `bindTagNonce` fails here, not with a TypeError. */
  const nonces = (store: IdempotencyStore): TagNonceStore => {
    expect(isTagNonceStore(store)).toBe(true);
    return store as IdempotencyStore & TagNonceStore;
  };

  it('binds a tag nonce to its first job: bound, then same for that job and other for any other', async () => {
    const tags = nonces(ctx.store());
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
    const store = ctx.store();
    const tags = nonces(store);
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
    const store = ctx.store();
    const tags = nonces(store);
    const id = job();
    expect(await tags.bindTagNonce(id, job(), { ttlMs: 60_000 })).toBe('bound');
    expectClaimed(await store.claim(id, { leaseMs: 10_000 }));
    const other = job();
    expectClaimed(await store.claim(other, { leaseMs: 10_000 }));
    expect(await tags.bindTagNonce(other, job(), { ttlMs: 60_000 })).toBe('bound');
  });

  it('forgets a binding after ttlMs, not before', async () => {
    const tags = nonces(ctx.store());
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
    const tags = nonces(ctx.store());
    const n = nonce();
    const ids = Array.from({ length: 50 }, job);
    const results = await Promise.all(ids.map((id) => tags.bindTagNonce(n, id, { ttlMs: 60_000 })));
    expect(results.filter((r) => r === 'bound')).toHaveLength(1);
    expect(results.filter((r) => r === 'other')).toHaveLength(49);
    const winner = ids[results.indexOf('bound')] as string;
    expect(await tags.bindTagNonce(n, winner, { ttlMs: 60_000 })).toBe('same');
  });

  it('rejects a bad nonce, jobId or ttlMs with ERR_OPTION_INVALID, and works no more once closed', async () => {
    const store = ctx.store();
    const tags = nonces(store);
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
}
