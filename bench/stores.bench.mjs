// Group `stores`: claim + complete pairs per second on the memory store and on the Redis store
// (sequential, and 100 pairs in flight), against a bare `SET NX PX` + `SET PX` pair sent through the
// same ioredis client: the Redis floor for the same two round trips, so ours/bare is the cost of the
// Lua scripts and the store's bookkeeping. Starts its own redis-server (bench/redis-server.mjs).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createMemoryStore } from '@jobhook/core';
import { createRedisStore } from '@jobhook/core/redis';
import { compareAsync } from './harness.mjs';
import { startRedis } from './redis-server.mjs';
import { ops, ratio, table, withRme, logResult } from './report.mjs';

export const description = 'claim + complete pairs/s: memory store; Redis store sequential and 100 in flight vs bare SET NX PX + SET';

const LEASE_MS = 30_000;
const TTL_MS = 10_000; // short, so the keys of a long run expire while it runs
const IN_FLIGHT = 100;
/** Async batches are longer than the sync harness's 25 ms: a Redis batch has more jitter. */

export const NOTES = [
  'pair     = one claim(jobId, { leaseMs }) then complete(jobId, token, { ttlMs }) on a new job id: two store operations, i.e. two Redis round trips (EVALSHA each).',
  'bare     = SET key token NX PX lease, then SET key "d" PX ttl, through the same ioredis client: the same two round trips without Lua or the store.',
  'sequential = one pair at a time (await claim, await complete); 100 in flight = 100 concurrent workers each doing pairs back to back, on one connection (ioredis pipelines them).',
  'Each row is one interleaved comparison (ours and bare batch by batch, ~50 ms batches); redis-server runs on the same 2-core machine as node.',
  'ops/s = 2 × pairs/s (store operations per second).',
];

/** A claim + complete pair on `store`, checked (a pair that did not claim would measure nothing). */
function storePair(store, idPrefix) {
  let i = 0;
  return async () => {
    const jobId = `${idPrefix}${i++}`;
    const claim = await store.claim(jobId, { leaseMs: LEASE_MS });
    if (claim.state !== 'claimed') throw new Error(`stores bench: ${jobId} was ${claim.state}, not claimed`);
    if (!(await store.complete(jobId, claim.token, { ttlMs: TTL_MS }))) throw new Error(`stores bench: complete(${jobId}) answered false`);
  };
}

/** The bare Redis pair: SET NX PX, then SET PX, same client, same key shape. */
function barePair(client, keyPrefix) {
  let i = 0;
  return async () => {
    const key = `${keyPrefix}{${i++}}`;
    if ((await client.set(key, `c:${randomUUID()}`, 'PX', LEASE_MS, 'NX')) !== 'OK') throw new Error(`stores bench: SET NX ${key} failed`);
    if ((await client.set(key, 'd', 'PX', TTL_MS)) !== 'OK') throw new Error(`stores bench: SET ${key} failed`);
  };
}

/** @param {{ settings: object, log: (s: string) => void }} ctx */
export async function run({ settings, log }) {
  const runId = randomUUID().slice(0, 8);
  log('  memory store…');
  const memory = createMemoryStore();
  const [mem] = await compareAsync([{ name: 'memory', fn: storePair(memory, `m-${runId}-`), concurrency: 1 }], {
    ...settings,
    batchMs: 50,
  });
  await memory.close();

  log('  starting redis-server…');
  const redis = await startRedis();
  const client = new Redis(redis.url);
  const store = createRedisStore({ redis: client, keyPrefix: `bench-${runId}:` });
  const rows = [];
  try {
    for (const [mode, concurrency] of [
      ['sequential', 1],
      [`${IN_FLIGHT} in flight`, IN_FLIGHT],
    ]) {
      log(`  redis ${mode}: store vs bare SET NX PX + SET…`);
      const [ours, bare] = await compareAsync(
        [
          { name: 'redis store', fn: storePair(store, `${concurrency}-`), concurrency },
          { name: 'bare SET', fn: barePair(client, `bare-${runId}-${concurrency}:`), concurrency },
        ],
        { ...settings, batchMs: 50 },
      );
      rows.push({ mode, concurrency, ours, bare, ratio: ours.opsPerSec / bare.opsPerSec });
    }
  } finally {
    await store.close();
    client.disconnect();
    await redis.stop();
  }

  const us = (r) => (r.nsPerOp / 1000).toFixed(1);
  const text = table(
    [
      { header: 'store', align: 'left' },
      { header: 'mode', align: 'left' },
      { header: 'pairs/s' },
      { header: 'µs/pair' },
      { header: 'bare pairs/s' },
      { header: 'bare µs/pair' },
      { header: 'store/bare' },
    ],
    [
      ['memory', 'sequential', withRme(ops(mem.opsPerSec), mem.rme), us(mem), '—', '—', '—'],
      ...rows.map((r) => [
        'redis',
        r.mode,
        withRme(ops(r.ours.opsPerSec), r.ours.rme),
        us(r.ours),
        withRme(ops(r.bare.opsPerSec), r.bare.rme),
        us(r.bare),
        ratio(r.ratio),
      ]),
    ],
  );
  const notes = [...NOTES, `redis-server ${redis.version} on 127.0.0.1, nothing persisted; ioredis client with default options.`];
  logResult(log, text, notes);
  return {
    text,
    notes,
    data: { leaseMs: LEASE_MS, ttlMs: TTL_MS, inFlight: IN_FLIGHT, redisVersion: redis.version, memory: mem, redis: rows },
  };
}
