import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore as createRedisStoreFromSubpath } from '@jobhook/core/redis';
import { isJobhookError, type JobhookError } from '../../src/errors.js';
import type { IdempotencyStore } from '../../src/store/idempotency-store.js';
import { createRedisStore, type RedisStoreOptions } from '../../src/store/redis-store.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { describeStoreConformance } from './conformance.js';

const prefix = (): string => `jobhook-test-${randomUUID().slice(0, 8)}:`;

let server: RedisServer;
let sharedClient: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  sharedClient = server.client();
});
afterAll(async () => {
  await server?.dispose(); // closes sharedClient too
});

describeStoreConformance('redis (URL: the store owns its client)', () => createRedisStore({ redis: server.url, keyPrefix: prefix() }), {
  tagNonceStore: true,
});
describeStoreConformance('redis (an ioredis client passed in)', () => createRedisStore({ redis: sharedClient, keyPrefix: prefix() }), {
  tagNonceStore: true,
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function claimToken(store: IdempotencyStore, jobId: string, leaseMs = 10_000): Promise<string> {
  const result = await store.claim(jobId, { leaseMs });
  if (result.state !== 'claimed') throw new Error(`expected claimed, got ${JSON.stringify(result)}`);
  return result.token;
}

/**
 * Runs `op`, expecting ERR_STORE_UNAVAILABLE; returns the error and how long it took. Only lower
 * bounds are checked on `ms` (timers never fire early): what failed, and why, is told by the error,
 * not by a wall clock on a busy machine.
 */
async function expectUnavailable(op: () => Promise<unknown>): Promise<{ error: JobhookError; ms: number }> {
  const t0 = performance.now();
  let error: unknown;
  try {
    await op();
  } catch (err) {
    error = err;
  }
  const ms = performance.now() - t0;
  if (!isJobhookError(error, 'ERR_STORE_UNAVAILABLE'))
    throw new Error(`expected ERR_STORE_UNAVAILABLE, got ${String(error)}`, { cause: error });
  return { error, ms };
}

/** A refused or lost connection, as ioredis reports it (not the store's own timeout). */
const CONNECTION_FAILED = /ECONNREFUSED|MaxRetriesPerRequest|Reached the max retries|Connection is closed|connect/i;

/** Unhandled rejections seen while a test runs (vitest would fail the run too; this names the test). */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});
afterEach(() => {
  expect(unhandled).toEqual([]);
});

describe('createRedisStore', () => {
  const stores: IdempotencyStore[] = [];
  const track = (store: IdempotencyStore): IdempotencyStore => {
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('is exported from @jobhook/core/redis', async () => {
    expect(createRedisStoreFromSubpath.name).toBe('createRedisStore');
    expect(() => createRedisStoreFromSubpath({ redis: 'nope' })).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    const store = track(createRedisStoreFromSubpath({ redis: server.url, keyPrefix: prefix() }));
    expect((await store.claim(randomUUID(), { leaseMs: 1000 })).state).toBe('claimed');
  });

  it('validates its options at construction, saying what is wrong', () => {
    const bad: [unknown, RegExp][] = [
      [undefined, /createRedisStore: options must be an object with `redis`, got undefined/],
      [{}, /createRedisStore: redis must be a redis:\/\/ or rediss:\/\/ URL or an ioredis Redis or Cluster client, got undefined/],
      [{ redis: 42 }, /redis must be a redis:\/\/ or rediss:\/\/ URL or an ioredis Redis or Cluster client, got 42/],
      [{ redis: {} }, /got an object/],
      [{ redis: 'localhost:6379' }, /redis must be a redis:\/\/ or rediss:\/\/ URL or an ioredis client, got "localhost:6379"/],
      [{ redis: 'http://127.0.0.1:6379' }, /redis must be a redis:\/\/ or rediss:\/\/ URL/],
      [
        { redis: server.url, keyPrefix: 'app{1}:' },
        /keyPrefix must be a string of at most 100 characters without \{ or \}.*got "app\{1\}:"/,
      ],
      [{ redis: server.url, keyPrefix: 7 }, /keyPrefix .* got 7/],
      [{ redis: server.url, keyPrefix: 'p'.repeat(101) }, /keyPrefix must be a string of at most 100 characters/],
      [
        { redis: server.url, operationTimeoutMs: 0 },
        /operationTimeoutMs must be a whole number of milliseconds from 1 to 2147483647, got 0/,
      ],
      [{ redis: server.url, operationTimeoutMs: 1.5 }, /operationTimeoutMs .* got 1\.5/],
      [{ redis: server.url, operationTimeoutMs: '2000' }, /operationTimeoutMs .* got "2000"/],
      [{ redis: server.url, operationTimeoutMs: 2 ** 31 }, /operationTimeoutMs .* got 2147483648/],
    ];
    for (const [options, message] of bad) {
      let error: unknown;
      try {
        track(createRedisStore(options as RedisStoreOptions));
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify(options)).toMatchObject({ name: 'JobhookError', code: 'ERR_OPTION_INVALID' });
      expect((error as Error).message).toMatch(message);
    }
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the test's name spells the key's template.
  it('keeps one key per job, `${keyPrefix}{${jobId}}`: the job id is the hash tag', async () => {
    const keyPrefix = prefix();
    const store = track(createRedisStore({ redis: server.url, keyPrefix }));
    const jobId = randomUUID();
    const token = await claimToken(store, jobId, 5000);
    const key = `${keyPrefix}{${jobId}}`;
    expect(await server.command(['KEYS', `${keyPrefix}*`])).toEqual([key]);
    expect(await server.command(['GET', key])).toBe(`c:${token}`);
    const pttl = await server.command(['PTTL', key]);
    expect(pttl).toBeGreaterThan(4000);
    expect(pttl).toBeLessThanOrEqual(5000);
    expect(await server.command(['CLUSTER', 'KEYSLOT', key])).toBeInstanceOf(Error); // not a cluster: fine
    expect(await store.complete(jobId, token, { ttlMs: 60_000 })).toBe(true);
    expect(await server.command(['GET', key])).toBe('d');
    expect(await server.command(['PTTL', key])).toBeGreaterThan(59_000);
    const other = randomUUID();
    const otherToken = await claimToken(store, other);
    expect(await store.release(other, otherToken)).toBe(true);
    expect(await server.command(['KEYS', `${keyPrefix}*`])).toEqual([key]);
  });

  it('does not close a client passed in; closes the one it made from a URL', async () => {
    const client = new Redis(server.url);
    try {
      const store = createRedisStore({ redis: client, keyPrefix: prefix() });
      await claimToken(store, randomUUID());
      await store.close();
      expect(await client.ping()).toBe('PONG');
      expect(client.status).toBe('ready');
    } finally {
      client.disconnect();
    }

    const name = `jobhook-owned-${randomUUID().slice(0, 8)}`;
    const owned = createRedisStore({ redis: `${server.url}?connectionName=${name}`, keyPrefix: prefix() });
    await claimToken(owned, randomUUID());
    const connections = async (): Promise<number> =>
      String(await server.command(['CLIENT', 'LIST']))
        .split('\n')
        .filter((line) => line.includes(`name=${name}`)).length;
    expect(await connections()).toBe(1);
    await owned.close();
    // Gone from the server's client list once the QUIT is through (waited for without a count of
    // tries: a connection left open fails at the test timeout).
    while ((await connections()) > 0) await sleep(20);
  });

  it('finds its scripts again after SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
    const store = track(createRedisStore({ redis: server.url, keyPrefix: prefix() }));
    const a = randomUUID();
    const token = await claimToken(store, a);
    expect(await server.command(['SCRIPT', 'FLUSH'])).toBe('OK');
    expect((await store.claim(a, { leaseMs: 1000 })).state).toBe('in-flight');
    expect(await server.command(['SCRIPT', 'FLUSH'])).toBe('OK');
    expect(await store.complete(a, token, { ttlMs: 60_000 })).toBe(true);
    expect(await store.claim(a, { leaseMs: 1000 })).toEqual({ state: 'done' });
  });

  it('fails fast with ERR_STORE_UNAVAILABLE when nothing listens at the URL', async () => {
    const port = await freePort();
    // A timeout far longer than a refused connection takes: failing at the refusal, not at the
    // timeout, is told by the cause (a hang would end in "no answer in 30000 ms").
    const store = track(createRedisStore({ redis: `redis://127.0.0.1:${port}`, operationTimeoutMs: 30_000 }));
    const { error } = await expectUnavailable(() => store.claim('job', { leaseMs: 1000 }));
    expect(error.message).not.toMatch(/no answer in/);
    expect(error.message).toMatch(CONNECTION_FAILED);
    expect(error.status).toBe(503);
    expect(error.message).toMatch(/^idempotency store unavailable: Redis claim failed: /);
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.detail).toEqual({ operation: 'claim', jobId: 'job' });
  });

  it('times out an operation Redis does not answer (CLIENT PAUSE), then works again', async () => {
    const keyPrefix = prefix();
    const owned = track(createRedisStore({ redis: server.url, keyPrefix, operationTimeoutMs: 300 }));
    const passed = track(createRedisStore({ redis: sharedClient, keyPrefix, operationTimeoutMs: 300 }));
    const token = await claimToken(owned, 'paused-job');
    expect((await passed.claim('paused-job', { leaseMs: 1000 })).state).toBe('in-flight');
    // Paused far longer than the test needs, and unpaused explicitly: no guess at when a pause ends.
    // WRITE pauses the stores' scripts (EVAL/EVALSHA) but not CLIENT UNPAUSE, which ALL would.
    expect(await server.command(['CLIENT', 'PAUSE', '60000', 'WRITE'])).toBe('OK');
    try {
      for (const store of [owned, passed]) {
        const { error, ms } = await expectUnavailable(() => store.claim(randomUUID(), { leaseMs: 1000 }));
        expect(ms).toBeGreaterThanOrEqual(290);
        expect(error.message).toMatch(/no answer in 300 ms/); // the store's timeout, nothing else
      }
    } finally {
      expect(await server.command(['CLIENT', 'UNPAUSE'])).toBe('OK');
    }
    await waitUntilWorking(owned);
    await waitUntilWorking(passed);
    expect(await owned.complete('paused-job', token, { ttlMs: 60_000 })).toBe(true);
    expect(await passed.claim('paused-job', { leaseMs: 1000 })).toEqual({ state: 'done' });
  });
});

/**
 * Polls a claim until the store answers (Redis back and reconnected). No wall-clock bound on how
 * soon, on a busy machine: a store that never comes back fails at the test timeout.
 */
async function waitUntilWorking(store: IdempotencyStore): Promise<void> {
  for (;;) {
    try {
      await store.claim(`probe-${randomUUID()}`, { leaseMs: 1000 });
      return;
    } catch (err) {
      if (!isJobhookError(err, 'ERR_STORE_UNAVAILABLE')) throw err;
      await sleep(50);
    }
  }
}

describe('createRedisStore when Redis goes down and comes back', () => {
  // A server of our own, even when REDIS_URL is set: this test stops and restarts it.
  let own: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    own = await startRedisServer({ own: true });
    client = own.client(); // ioredis defaults: offline queue, 20 retries per request
    client.on('error', () => {}); // the test expects connection errors; keep the log quiet
  });
  afterAll(async () => {
    client?.disconnect();
    await own?.dispose();
  });

  it('rejects every operation with ERR_STORE_UNAVAILABLE within ~operationTimeoutMs, then recovers with the same store', async () => {
    const timeoutMs = 500;
    const stores = {
      url: createRedisStore({ redis: own.url, keyPrefix: prefix(), operationTimeoutMs: timeoutMs }),
      client: createRedisStore({ redis: client, keyPrefix: prefix(), operationTimeoutMs: timeoutMs }),
    };
    try {
      const tokens = {
        url: await claimToken(stores.url, 'outage-job', 60_000),
        client: await claimToken(stores.client, 'outage-job', 60_000),
      };

      await own.stop();

      for (const [kind, store] of Object.entries(stores)) {
        const token = tokens[kind as keyof typeof tokens];
        const ops: [string, () => Promise<unknown>][] = [
          ['claim', () => store.claim('outage-job', { leaseMs: 1000 })],
          ['complete', () => store.complete('outage-job', token, { ttlMs: 1000 })],
          ['release', () => store.release('outage-job', token)],
          ['extend', () => store.extend('outage-job', token, { leaseMs: 1000 })],
        ];
        // Each rejected, either by the store's own timeout or by the lost connection: never left
        // hanging (which would end the test at its timeout, not here).
        const withinTimeout = new RegExp(`no answer in ${timeoutMs} ms|${CONNECTION_FAILED.source}`, 'i');
        for (const [name, op] of ops) {
          const { error } = await expectUnavailable(op);
          expect(error.message, `${kind} ${name}`).toMatch(new RegExp(`^idempotency store unavailable: Redis ${name} failed: `));
          expect(error.message, `${kind} ${name}`).toMatch(withinTimeout);
          expect(error.cause, `${kind} ${name}`).toBeDefined();
        }
        // Many at once: all rejected, none hangs, none is an unhandled rejection.
        const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => store.claim(`burst-${i}`, { leaseMs: 1000 })));
        for (const r of results) {
          expect(r.status).toBe('rejected');
          if (r.status === 'rejected') {
            expect(isJobhookError(r.reason, 'ERR_STORE_UNAVAILABLE')).toBe(true);
            expect((r.reason as Error).message).toMatch(withinTimeout);
          }
        }
      }
      // The store the URL made fails at the first refused reconnection, not at the timeout.
      const { error } = await expectUnavailable(() => stores.url.claim('fast-fail', { leaseMs: 1000 }));
      expect(error.message).not.toMatch(/no answer in/);
      expect(error.message).toMatch(CONNECTION_FAILED);

      await own.restart();

      // Both reconnect: ours (retries at most a second apart), and the passed-in client on ioredis's
      // default backoff.
      await waitUntilWorking(stores.url);
      await waitUntilWorking(stores.client);
      for (const [kind, store] of Object.entries(stores)) {
        // Redis came back empty (nothing persisted): the old claim is gone, the job claimable anew.
        expect(await store.complete('outage-job', tokens[kind as keyof typeof tokens], { ttlMs: 1000 }), kind).toBe(false);
        const id = randomUUID();
        const token = await claimToken(store, id);
        expect((await store.claim(id, { leaseMs: 1000 })).state).toBe('in-flight');
        expect(await store.extend(id, token, { leaseMs: 5000 })).toBe(true);
        expect(await store.complete(id, token, { ttlMs: 60_000 })).toBe(true);
        expect(await store.claim(id, { leaseMs: 1000 })).toEqual({ state: 'done' });
      }
    } finally {
      await Promise.all(Object.values(stores).map((s) => s.close()));
    }
  });
});
