// Group `stores`: claim + complete pairs per second on the memory store and on the Redis store
// (sequential, and 100 pairs in flight), against a bare `SET NX PX` + `SET PX` pair sent through the
// same ioredis client: the Redis floor for the same two round trips, so ours/bare is the cost of the
// Lua scripts and the store's bookkeeping. Starts its own redis-server (bench/redis-server.mjs).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { createMemoryStore } from '@jobhook/core';
import { createRedisStore } from '@jobhook/core/redis';
import { startRedis } from './redis-server.mjs';
import { ops, ratio, table, withRme } from './report.mjs';

export const description = 'claim + complete pairs/s: memory store; Redis store sequential and 100 in flight vs bare SET NX PX + SET';

const LEASE_MS = 30_000;
const TTL_MS = 10_000; // short, so the keys of a long run expire while it runs
const IN_FLIGHT = 100;
/** Async batches are longer than the sync harness's 25 ms: a Redis batch has more jitter. */
const BATCH_MS = 50;

export const NOTES = [
  'pair     = one claim(jobId, { leaseMs }) then complete(jobId, token, { ttlMs }) on a new job id: two store operations, i.e. two Redis round trips (EVALSHA each).',
  'bare     = SET key token NX PX lease, then SET key "d" PX ttl, through the same ioredis client: the same two round trips without Lua or the store.',
  'sequential = one pair at a time (await claim, await complete); 100 in flight = 100 concurrent workers each doing pairs back to back, on one connection (ioredis pipelines them).',
  'Each row is one interleaved comparison (ours and bare batch by batch, ~50 ms batches); redis-server runs on the same 2-core machine as node.',
  'ops/s = 2 × pairs/s (store operations per second).',
];

/**
 * The async counterpart of harness.mjs `compare`: tasks warmed up round-robin, calibrated to
 * ~BATCH_MS batches, then sampled interleaved until each has `time` ms and `minSamples` batches.
 * A task is `{ name, fn: async () => {}, concurrency }`; a batch of n ops runs n calls of fn with
 * at most `concurrency` pending. Returns `{ name, opsPerSec, nsPerOp, rme, samples, ops }` per task.
 */
async function compareAsync(tasks, settings) {
  const { time, warmup, minSamples } = settings;
  const runBatch = async (task, n) => {
    let started = 0;
    const worker = async () => {
      while (started < n) {
        started++;
        await task.fn();
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: Math.min(task.concurrency, n) }, worker));
    return performance.now() - t0;
  };
  globalThis.gc?.();
  for (const task of tasks) await task.fn(); // fail fast on a broken task
  const warmEnd = performance.now() + warmup * tasks.length;
  while (performance.now() < warmEnd) for (const task of tasks) await runBatch(task, Math.max(task.concurrency, 50));
  const state = [];
  for (const task of tasks) {
    let n = task.concurrency;
    for (;;) {
      const ms = await runBatch(task, n);
      if (ms >= BATCH_MS / 4) {
        n = Math.max(task.concurrency * 2, Math.round((n * BATCH_MS) / ms));
        break;
      }
      n *= 4;
    }
    state.push({ task, n, timed: 0, samples: [], count: 0 });
  }
  const done = (s) => s.timed >= time && s.samples.length >= minSamples;
  while (!state.every(done)) {
    for (const s of state) {
      const ms = await runBatch(s.task, s.n);
      s.timed += ms;
      s.count += s.n;
      s.samples.push((ms * 1e6) / s.n);
    }
  }
  globalThis.gc?.();
  return state.map(({ task, samples, count }) => {
    const sorted = [...samples].sort((a, b) => a - b);
    const n = sorted.length;
    const mean = sorted.reduce((a, b) => a + b, 0) / n;
    const sd = n > 1 ? Math.sqrt(sorted.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
    const median = n % 2 ? sorted[(n - 1) >> 1] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    return {
      name: task.name,
      opsPerSec: 1e9 / median,
      nsPerOp: median,
      meanNsPerOp: mean,
      minNsPerOp: sorted[0],
      maxNsPerOp: sorted[n - 1],
      rme: n > 1 ? ((1.96 * sd) / Math.sqrt(n) / mean) * 100 : 0,
      samples: n,
      ops: count,
    };
  });
}

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
  const [mem] = await compareAsync([{ name: 'memory', fn: storePair(memory, `m-${runId}-`), concurrency: 1 }], settings);
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
        settings,
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
  log('');
  log(text);
  log('');
  const notes = [...NOTES, `redis-server ${redis.version} on 127.0.0.1, nothing persisted; ioredis client with default options.`];
  for (const note of notes) log(`  ${note}`);
  return {
    text,
    notes,
    data: { leaseMs: LEASE_MS, ttlMs: TTL_MS, inFlight: IN_FLIGHT, redisVersion: redis.version, memory: mem, redis: rows },
  };
}
