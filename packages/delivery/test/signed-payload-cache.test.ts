// The bounded cache of signed webhooks behind the deliverer: bytes and entries bounded, failures not kept.
import { describe, expect, it } from 'vitest';
import { createSignedPayloadCache, ENTRY_OVERHEAD_BYTES, type SignedWebhook } from '../src/signed-payload-cache.js';

const webhook = (size: number): SignedWebhook => ({ body: Buffer.alloc(size, 0x20), headers: { 'X-Service-Signature': 'ab' } });

function counted(size: number) {
  let calls = 0;
  return {
    sign: async () => {
      calls += 1;
      return webhook(size);
    },
    get calls() {
      return calls;
    },
  };
}

describe('createSignedPayloadCache', () => {
  it('keeps a signed entry: the second get does not sign', async () => {
    const cache = createSignedPayloadCache({ maxEntries: 10, maxBytes: 1 << 20 });
    const s = counted(100);
    const first = await cache.get('a', s.sign);
    expect(await cache.get('a', s.sign)).toBe(first);
    expect(s.calls).toBe(1);
    expect([cache.size, cache.bytes]).toEqual([1, 100 + ENTRY_OVERHEAD_BYTES]);
  });

  it('stays within maxBytes, dropping the least recently used first', async () => {
    const entry = 1000 + ENTRY_OVERHEAD_BYTES;
    const cache = createSignedPayloadCache({ maxEntries: 100, maxBytes: 2 * entry });
    const a = counted(1000);
    const b = counted(1000);
    const c = counted(1000);
    await cache.get('a', a.sign);
    await cache.get('b', b.sign);
    await cache.get('a', a.sign); // a used last: b is the oldest now
    await cache.get('c', c.sign);
    expect(cache.bytes).toBeLessThanOrEqual(2 * entry);
    expect(cache.size).toBe(2);
    await cache.get('a', a.sign);
    await cache.get('b', b.sign);
    expect([a.calls, b.calls, c.calls]).toEqual([1, 2, 1]);
  });

  it('does not keep an entry larger than maxBytes on its own (used once), nor evict others for it', async () => {
    const cache = createSignedPayloadCache({ maxEntries: 100, maxBytes: 10_000 });
    const small = counted(10);
    const huge = counted(20_000);
    await cache.get('small', small.sign);
    expect((await cache.get('huge', huge.sign)).body.length).toBe(20_000);
    expect(cache.size).toBe(1);
    await cache.get('small', small.sign);
    expect(small.calls).toBe(1);
    await cache.get('huge', huge.sign);
    expect(huge.calls).toBe(2);
  });

  it('shares one sign between concurrent gets; a failed sign is not kept', async () => {
    const cache = createSignedPayloadCache({ maxEntries: 10, maxBytes: 1 << 20 });
    let calls = 0;
    let fail = true;
    const sign = async (): Promise<SignedWebhook> => {
      calls += 1;
      await Promise.resolve();
      if (fail) throw new Error('no key');
      return webhook(5);
    };
    const results = await Promise.allSettled([cache.get('a', sign), cache.get('a', sign)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
    fail = false;
    await cache.get('a', sign);
    expect(calls).toBe(2);
    expect(cache.size).toBe(1);
  });
});
