import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFakeClock as publishedFakeClock, describeStoreConformance as publishedSuite } from '@jobhook/core/testing';
import { createMemoryStore as createMemoryStoreFromIndex, type IdempotencyStore } from '../../src/index.js';
import {
  createMemoryStore,
  DEFAULT_MEMORY_STORE_MAX,
  MAX_MEMORY_STORE_MAX,
  type MemoryStoreOptions,
} from '../../src/store/memory-store.js';
import { createFakeClock, describeStoreConformance, rejectionCode } from './conformance.js';

// Clock starting at 0: a store must not take time 0 for "no expiry". Through the published subpath,
// as a user checks a store of their own.
const clock = publishedFakeClock(0);
publishedSuite('memory (fake clock)', () => createMemoryStore({ clock }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
  clock,
  tagNonceStore: true,
});

// The default clock (performance.now), in real time, with a small LRU.
describeStoreConformance('memory (real clock, max 1000)', () => createMemoryStore({ max: 1000 }), { tagNonceStore: true });

async function claimToken(store: IdempotencyStore, jobId: string, leaseMs = 10_000): Promise<string> {
  const result = await store.claim(jobId, { leaseMs });
  if (result.state !== 'claimed') throw new Error(`expected claimed, got ${JSON.stringify(result)}`);
  return result.token;
}

describe('createMemoryStore', () => {
  it('is exported from the main entry', () => {
    expect(createMemoryStoreFromIndex).toBe(createMemoryStore);
    expect(DEFAULT_MEMORY_STORE_MAX).toBe(100_000);
  });

  it('validates its options at construction, saying what is wrong', () => {
    const bad: [unknown, RegExp][] = [
      [{ max: 0 }, /createMemoryStore: max must be an integer from 1 to 10000000, got 0/],
      [{ max: -1 }, /got -1/],
      [{ max: 1.5 }, /got 1\.5/],
      [{ max: '10' }, /got "10"/],
      [{ max: Number.NaN }, /got NaN/],
      [{ max: MAX_MEMORY_STORE_MAX + 1 }, /max must be an integer from 1 to 10000000/],
      [{ clock: {} }, /createMemoryStore: clock must have a now method/],
      [{ clock: Date.now }, /clock must have a now method \(returning milliseconds\), got function/],
      [null, /createMemoryStore: options must be an object/],
      ['fast', /options must be an object/],
    ];
    for (const [options, message] of bad) {
      let error: unknown;
      try {
        createMemoryStore(options as MemoryStoreOptions);
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify(options)).toMatchObject({ name: 'JobhookError', code: 'ERR_OPTION_INVALID', status: 500 });
      expect((error as Error).message).toMatch(message);
    }
    expect(() => createMemoryStore({ max: 1 })).not.toThrow();
    expect(() => createMemoryStore()).not.toThrow();
  });

  it('forgets the least recently seen done job beyond max: a duplicate of it is handled again', async () => {
    const store = createMemoryStore({ max: 3, clock: createFakeClock(1000) });
    const ids = ['a', 'b', 'c', 'd'];
    for (const id of ids.slice(0, 3)) expect(await store.complete(id, await claimToken(store, id), { ttlMs: 60_000 })).toBe(true);
    // Seeing `a` again makes `b` the least recently seen.
    expect(await store.claim('a', { leaseMs: 1000 })).toEqual({ state: 'done' });
    expect(await store.complete('d', await claimToken(store, 'd'), { ttlMs: 60_000 })).toBe(true);
    expect((await store.claim('b', { leaseMs: 1000 })).state).toBe('claimed');
    for (const id of ['a', 'c', 'd']) expect(await store.claim(id, { leaseMs: 1000 })).toEqual({ state: 'done' });
  });

  it('never evicts a live claim, however many jobs complete around it', async () => {
    const clock = createFakeClock(0);
    const store = createMemoryStore({ max: 2, clock });
    const held = new Map<string, string>();
    for (let i = 0; i < 50; i++) held.set(`held-${i}`, await claimToken(store, `held-${i}`, 60_000));
    for (let i = 0; i < 500; i++) {
      const id = `other-${i}`;
      expect(await store.complete(id, await claimToken(store, id), { ttlMs: 60_000 })).toBe(true);
    }
    clock.advance(59_999);
    for (const [id, token] of held) {
      expect((await store.claim(id, { leaseMs: 1000 })).state).toBe('in-flight');
      expect(await store.extend(id, token, { leaseMs: 1000 })).toBe(true);
    }
    for (const [id, token] of held) expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
  });

  it('sweeps leases that ran out, so abandoned claims do not pile up', async () => {
    const clock = createFakeClock(0);
    const store = createMemoryStore({ clock });
    // 5,000 claims abandoned by dead holders, then a later wave: all remain claimable and the
    // abandoned ones lapse (a fresh claim of each succeeds).
    for (let i = 0; i < 5000; i++) await claimToken(store, `dead-${i}`, 100);
    clock.advance(100);
    for (let i = 0; i < 5000; i++) await claimToken(store, `live-${i}`, 100);
    for (let i = 0; i < 5000; i += 499) expect((await store.claim(`dead-${i}`, { leaseMs: 100 })).state).toBe('claimed');
    for (let i = 0; i < 5000; i += 499) expect((await store.claim(`live-${i}`, { leaseMs: 100 })).state).toBe('in-flight');
  });

  it('answers in-flight until the lease ends to the millisecond, then lets the next claim in', async () => {
    const clock = createFakeClock(5);
    const store = createMemoryStore({ clock });
    await claimToken(store, 'j', 1000);
    clock.advance(999);
    expect(await store.claim('j', { leaseMs: 1000 })).toEqual({ state: 'in-flight', retryAfterMs: 1 });
    clock.advance(1);
    expect((await store.claim('j', { leaseMs: 1000 })).state).toBe('claimed');
  });

  it('rounds a fractional clock up to a whole retryAfterMs of at least 1', async () => {
    const clock = createFakeClock(0.25);
    const store = createMemoryStore({ clock });
    await claimToken(store, 'j', 10);
    clock.advance(9.9);
    expect(await store.claim('j', { leaseMs: 10 })).toEqual({ state: 'in-flight', retryAfterMs: 1 });
  });

  it('keeps a done job exactly ttlMs', async () => {
    const clock = createFakeClock(0);
    const store = createMemoryStore({ clock });
    await store.complete('j', await claimToken(store, 'j'), { ttlMs: 500 });
    clock.advance(499);
    expect(await store.claim('j', { leaseMs: 10 })).toEqual({ state: 'done' });
    clock.advance(1);
    expect((await store.claim('j', { leaseMs: 10 })).state).toBe('claimed');
  });

  it('issues unique tokens', async () => {
    const store = createMemoryStore();
    const tokens = new Set<string>();
    for (let i = 0; i < 1000; i++) tokens.add(await claimToken(store, `j-${i}`));
    expect(tokens.size).toBe(1000);
  });

  it('forgets everything on close', async () => {
    const store = createMemoryStore();
    const id = randomUUID();
    await claimToken(store, id);
    await store.close();
    expect(await rejectionCode(store.claim(id, { leaseMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
    await expect(store.claim(id, { leaseMs: 1000 })).rejects.toThrow('memoryStore.claim: the store is closed');
  });
});
