// The receive pipeline with several receiver instances sharing one real Redis, as behind a load
// balancer: exactly-once handling under concurrent duplicate deliveries, retries after failures,
// a holder that dies, and Redis going away and coming back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type IdempotencyStore, type Receiver, type ReceiverOptions } from '../../src/index.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const keys = createTestKeyPair();
let redis: RedisServer;
const stores: IdempotencyStore[] = [];

beforeAll(async () => {
  redis = await startRedisServer({ own: true });
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await redis?.dispose();
});

function instance(options: Partial<ReceiverOptions> & Pick<ReceiverOptions, 'onEvent'>): Receiver {
  const store = createRedisStore({ redis: redis.url, keyPrefix: `test:${process.pid}:`, operationTimeoutMs: 500 });
  stores.push(store);
  return createReceiver({ publicKeys: keys.publicKeyPem, store, ...options });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('several receivers sharing one Redis', () => {
  it('50 concurrent deliveries of one job over 4 instances: handled exactly once; others 200 or 503', async () => {
    let runs = 0;
    const onEvent = async () => {
      runs++;
      await sleep(50);
    };
    const receivers = [0, 1, 2, 3].map(() => instance({ onEvent }));
    const req = buildSignedRequest();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => receivers[i % 4]!.handle(req)));
    expect(runs).toBe(1);
    const kinds = answers.map((a) => a.outcome.kind);
    expect(kinds.filter((k) => k === 'handled')).toHaveLength(1);
    expect(kinds).toContain('in-flight'); // the deliveries really did overlap
    for (const a of answers) {
      expect([200, 503]).toContain(a.status);
      if (a.status === 503) expect(a.outcome.kind).toBe('in-flight');
      if (a.status === 200) expect(['handled', 'duplicate']).toContain(a.outcome.kind);
    }
    // After it completed, every instance answers 200 duplicate.
    for (const r of receivers) expect((await r.handle(req)).outcome.kind).toBe('duplicate');
  });

  it('a failing handler releases its claim; the retry on another instance handles it', async () => {
    const attempts: number[] = [];
    const a = instance({
      onEvent: () => {
        attempts.push(1);
        throw new Error('flaky');
      },
    });
    const b = instance({
      onEvent: () => {
        attempts.push(2);
      },
    });
    const req = buildSignedRequest();
    expect((await a.handle(req)).status).toBe(500);
    expect((await b.handle(req)).status).toBe(200);
    expect((await a.handle(req)).outcome.kind).toBe('duplicate');
    expect(attempts).toEqual([1, 2]);
  });

  it('a holder that dies loses its claim when the lease runs out; another instance takes the job; the stale holder cannot complete it', async () => {
    const store = createRedisStore({ redis: redis.url, keyPrefix: `lease:${process.pid}:` });
    stores.push(store);
    const req = buildSignedRequest();
    const jobId = req.event.job_id;
    // The "dead" holder: claimed, then never heard of again.
    const dead = await store.claim(jobId, { leaseMs: 200 });
    expect(dead.state).toBe('claimed');
    let runs = 0;
    const survivor = createReceiver({ publicKeys: keys.publicKeyPem, store, leaseMs: 200, onEvent: () => void runs++ });
    expect((await survivor.handle(req)).outcome.kind).toBe('in-flight');
    // The sender's retries: answered in-flight until Redis lets the dead holder's lease run out,
    // then one of them is handled (no guess at when that is on a busy machine).
    let retried = await survivor.handle(req);
    while (retried.outcome.kind === 'in-flight') {
      await sleep(20);
      retried = await survivor.handle(req);
    }
    expect(retried.outcome.kind).toBe('handled');
    expect(runs).toBe(1);
    if (dead.state === 'claimed') {
      expect(await store.complete(jobId, dead.token, { ttlMs: 60_000 })).toBe(false);
      expect(await store.release(jobId, dead.token)).toBe(false);
    }
    expect((await survivor.handle(req)).outcome.kind).toBe('duplicate');
  });

  it('Redis stopped mid-run: 503 and no crash; Redis back: normal service without restarting the receiver', async () => {
    let runs = 0;
    const r = instance({ onEvent: () => void runs++ });
    expect((await r.handle(buildSignedRequest())).status).toBe(200);
    await redis.stop();
    try {
      // Answered (not held: a hang fails at the test timeout), without a wall-clock bound.
      const down = await Promise.all([r.handle(buildSignedRequest()), r.handle(buildSignedRequest())]);
      for (const res of down) {
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBeDefined();
        expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'ERR_STORE_UNAVAILABLE' } });
      }
      expect(runs).toBe(1);
    } finally {
      await redis.restart();
    }
    await expect
      .poll(async () => (await r.handle(buildSignedRequest())).status, { interval: 200 }) // the config's 30 s default: a hang guard only
      .toBe(200);
    expect(r.stats().storeUnavailable).toBeGreaterThanOrEqual(2);
  });
});
