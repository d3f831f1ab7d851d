// One tag, one job: a receiver with recipientSecret binds each valid tag's nonce to the first job
// that carries it (webhook or poll), in its store, and refuses the tag on any other job. The same
// attacks on the memory store and on a real redis-server (tag-binding-scenarios.ts); then what only
// the memory store shows cheaply (the binding's life, 'log' mode, the poll path, a store of your own).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, type IdempotencyStore } from '../../src/index.js';
import { DEFAULT_RECIPIENT_TAG_MAX_AGE_MS, RECIPIENT_TAG_KEY } from '../../src/recipient/index.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { createFakeClock } from '../../src/testing/index.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { REUSED, describeTagBinding, freshTag, summary, tagReceiver, tagged } from '../helpers/tag-binding-scenarios.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.dispose();
});

describeTagBinding('memory store', () => createMemoryStore());
describeTagBinding('redis store', () => createRedisStore({ redis: redis.url, keyPrefix: `jobhook-tag-${randomUUID().slice(0, 8)}:` }));

const MINUTE = 60_000;
const SKEW = 5 * MINUTE;

describe('the binding of a tag nonce (memory store)', () => {
  it('lives recipientTagMaxAgeMs + 2 × clockSkewMs whatever doneTtlMs is, then the store forgets it', async () => {
    const clock = createFakeClock(1_000);
    const store = createMemoryStore({ clock });
    // Done marks kept one minute only: the binding must not go with them.
    const { receiver, handled } = tagReceiver(store, { doneTtlMs: MINUTE });
    const tag = freshTag();
    const own = tagged(tag);
    expect(summary(await receiver.handle(own))).toEqual([200, 'handled', undefined]);
    clock.advance(DEFAULT_RECIPIENT_TAG_MAX_AGE_MS + 2 * SKEW - 1);
    expect(summary(await receiver.handle(tagged(tag)))).toEqual(REUSED);
    // The tag's own job comes again after its done mark is gone: handled again (doneTtlMs), never refused.
    expect(summary(await receiver.handle(own))).toEqual([200, 'handled', undefined]);
    clock.advance(1);
    // Past the binding's life (the store's clock; the tag's own age is checked on Date.now).
    expect(summary(await receiver.handle(tagged(tag)))).toEqual([200, 'handled', undefined]);
    expect(handled).toHaveLength(3);
  });

  it("in 'log' mode handles the copied tag's job and warns with the cause", async () => {
    const { receiver, handled, lines } = tagReceiver(createMemoryStore(), { recipientCheck: 'log' });
    const tag = freshTag();
    expect((await receiver.handle(tagged(tag))).status).toBe(200);
    const copy = tagged(tag, { user_parameters: { [RECIPIENT_TAG_KEY]: tag, order: 7 } });
    expect(summary(await receiver.handle(copy))).toEqual([200, 'handled', undefined]);
    expect(handled).toHaveLength(2);
    expect(handled[1]!.user_parameters).toEqual({ order: 7 }); // the tag hidden, as for any tag
    const warnings = lines.filter((line) => String(line['msg']).includes("recipientCheck: 'log'"));
    expect(warnings).toEqual([
      expect.objectContaining({ level: 40, code: 'ERR_RECIPIENT_TAG_REUSED', cause: 'reused', jobId: copy.event.job_id }),
    ]);
    expect(receiver.stats()).toMatchObject({ handled: 2, rejected: {} });
  });

  it("binds a polled job's tag too: a copy of it on another job's webhook is refused, the job's own webhook passes", async () => {
    const { receiver, handled, lines } = tagReceiver(createMemoryStore());
    const tag = freshTag();
    const jobId = randomUUID();
    const poll = { job_id: jobId, status: 'success', output: { text: 'polled' }, user_parameters: { [RECIPIENT_TAG_KEY]: tag } };
    expect(await receiver.handlePolled(poll)).toEqual({ kind: 'handled', jobId });
    expect(summary(await receiver.handle(tagged(tag)))).toEqual(REUSED);
    expect(summary(await receiver.handle(tagged(tag, { job_id: jobId })))).toEqual([200, 'duplicate', undefined]);
    expect(handled.map((e) => e.job_id)).toEqual([jobId]);
    expect(lines).toContainEqual(
      expect.objectContaining({ code: 'ERR_RECIPIENT_TAG_REUSED', reason: expect.stringContaining('(reused)') }),
    );
  });

  it('handles a polled job whose tag another job took first (the poll asked for it by id), and says so in the log', async () => {
    const { receiver, lines } = tagReceiver(createMemoryStore());
    const tag = freshTag();
    expect((await receiver.handle(tagged(tag))).status).toBe(200); // the copy came first
    const jobId = randomUUID();
    const poll = { job_id: jobId, status: 'success', output: {}, user_parameters: { [RECIPIENT_TAG_KEY]: tag } };
    expect(await receiver.handlePolled(poll)).toEqual({ kind: 'handled', jobId });
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, code: 'ERR_RECIPIENT_TAG_REUSED', jobId }));
  });

  it('answers 503 (the sender retries) and runs nothing when the store cannot bind the nonce (Redis down)', async () => {
    const own = await startRedisServer({ own: true });
    const store = createRedisStore({ redis: own.url, keyPrefix: 'down:', operationTimeoutMs: 300 });
    const { receiver, handled } = tagReceiver(store);
    try {
      await own.stop();
      const tag = freshTag();
      const first = await receiver.handle(tagged(tag));
      expect(summary(first)).toEqual([503, 'store-unavailable', 'ERR_STORE_UNAVAILABLE']);
      expect(first.headers['retry-after']).toBeDefined();
      expect(handled).toEqual([]);
    } finally {
      await store.close();
      await own.dispose();
    }
  });

  it('answers 503 to a store of your own whose bindTagNonce answers something else, and runs nothing', async () => {
    const inner = createMemoryStore();
    const broken = Object.assign(Object.create(null) as object, {
      claim: inner.claim,
      complete: inner.complete,
      release: inner.release,
      extend: inner.extend,
      close: inner.close,
      bindTagNonce: async () => 'yes' as never,
    }) as IdempotencyStore;
    const { receiver, handled } = tagReceiver(broken);
    expect(summary(await receiver.handle(tagged(freshTag())))).toEqual([503, 'store-unavailable', 'ERR_STORE_UNAVAILABLE']);
    expect(handled).toEqual([]);
  });

  it('binds in a process of its own for a store without bindTagNonce, and warns at construction', async () => {
    const inner = createMemoryStore();
    // A store of your own: the contract's methods only.
    const yours: IdempotencyStore = {
      claim: (id, o) => inner.claim(id, o),
      complete: (id, t, o) => inner.complete(id, t, o),
      release: (id, t) => inner.release(id, t),
      extend: (id, t, o) => inner.extend(id, t, o),
      close: () => inner.close(),
    };
    const { receiver, handled, lines } = tagReceiver(yours);
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: expect.stringContaining('bound in this process only') })]);
    const tag = freshTag();
    const own = tagged(tag);
    expect((await receiver.handle(own)).status).toBe(200);
    expect(summary(await receiver.handle(tagged(tag)))).toEqual(REUSED);
    expect(summary(await receiver.handle(own))).toEqual([200, 'duplicate', undefined]);
    expect(handled).toHaveLength(1);
  });
});
