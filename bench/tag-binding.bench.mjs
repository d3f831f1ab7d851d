// Group `tag-binding`: what one tag, one job costs per delivery. receiver.handle() of tagged 1 KB
// webhooks (RSA-2048, each delivery a new job with a fresh tag) on the memory, Redis and PostgreSQL
// (transactional) stores, three ways in one interleaved row: without recipientSecret (the baseline),
// with it (tag checked, nonce bound in the store), and, on Redis and PostgreSQL, with it on the same
// store wrapped to offer only the IdempotencyStore contract, so that the receiver binds the nonces
// in its own process (what a store without bindTagNonce gets): the store's binding write is then the
// only difference. Run against a build without the binding, `tagged/none` is the tag check alone.
// Starts its own redis-server, and PostgreSQL unless DATABASE_URL is set.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import pg from 'pg';
import { createMemoryStore, createReceiver, silentLogger } from '@jobhook/core';
import { createRecipientTag } from '@jobhook/core/recipient';
import { createRedisStore } from '@jobhook/core/redis';
import { signPayload } from '@jobhook/core/sign';
import { buildTestEvent } from '@jobhook/core/testing';
import { createPostgresStore } from '@jobhook/postgres';
import { compareAsync } from './harness.mjs';
import { startPostgres } from './postgres-server.mjs';
import { startRedis } from './redis-server.mjs';
import { logResult, ops, ratio, table, withRme } from './report.mjs';

export const description =
  'receiver.handle()/s of tagged webhooks: without recipientSecret, with it (nonces bound in the store), and bound in the process; memory, Redis, PostgreSQL; 1 and 16 in flight';

const POOL = 4_000;
const IN_FLIGHT = 16;
const SECRET = 'bench-recipient-secret-0123456789abcdef';
const URL = 'https://hooks.example.com/jobs';

export const NOTES = [
  'none = no recipientSecret: verify, claim, handler, complete (the tag is in user_parameters, unchecked).',
  'tagged = recipientSecret and recipientUrl set: the tag checked (one HMAC), and the store binds each nonce (memory: a same-turn LRU lookup and set; Redis: one more Lua round trip, SET NX PX; PostgreSQL: one more autocommit statement on the pool, an upsert with its own WAL flush, before the job transaction).',
  'in process = the same store wrapped to offer claim/complete/release/extend/close only (and runInTransaction for PostgreSQL): the receiver binds in a memory store of its own, as for a store without bindTagNonce.',
  'Each delivery: a new job_id and a fresh tag (another nonce), so every call binds; a fresh store and receiver when the pool of deliveries wraps.',
  `16 in flight = the sender's default delivery concurrency; the pg pool has ${IN_FLIGHT} connections. redis-server without persistence; PostgreSQL with fsync and synchronous_commit on; all on the same 2-core machine as node.`,
];

/** The contract's methods only (runInTransaction kept): the receiver then binds nonces in-process. */
function withoutBinding(store) {
  const own = {
    claim: (id, o) => store.claim(id, o),
    complete: (id, t, o) => store.complete(id, t, o),
    release: (id, t) => store.release(id, t),
    extend: (id, t, o) => store.extend(id, t, o),
    close: () => store.close(),
  };
  if (typeof store.runInTransaction === 'function') own.runInTransaction = (id, o, work) => store.runInTransaction(id, o, work);
  return own;
}

export async function run({ settings, log }) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = publicKey.export({ type: 'pkcs1', format: 'pem' });
  log(`  signing ${POOL.toLocaleString('en')} tagged deliveries…`);
  const deliveries = [];
  for (let i = 0; i < POOL; i++) {
    const tag = createRecipientTag({ secret: SECRET, webhookReceiver: URL });
    const event = buildTestEvent({
      output: { raw_text: 'Facture n° 2026-11-22 — Café Crème, 2 × 3,50 € — 東京 📄 '.repeat(12), pages: 1 },
      user_parameters: { order: `A-${i}`, [tag.key]: tag.value },
    });
    const signed = signPayload(event, privateKey);
    const headers = { 'content-type': 'application/json' };
    for (const [k, v] of Object.entries(signed.headers)) headers[k.toLowerCase()] = v;
    deliveries.push({ headers, rawBody: signed.body });
  }
  log('  starting redis-server and PostgreSQL…');
  // DATABASE_URL: a server of your own (as the store tests take it), left running; else a throwaway cluster.
  const external = process.env.DATABASE_URL;
  const [redis, postgres] = await Promise.all([
    startRedis(),
    external ? { url: external, version: 'DATABASE_URL', stop: async () => {} } : startPostgres(),
  ]);
  const pool = new pg.Pool({ connectionString: postgres.url, max: IN_FLIGHT });
  pool.on('error', () => {});
  const closers = [];

  const makeStore = async (kind) => {
    if (kind === 'memory') return createMemoryStore();
    if (kind === 'redis') return createRedisStore({ redis: redis.url, keyPrefix: `bench-${randomUUID().slice(0, 8)}:` });
    const store = createPostgresStore(
      { pool },
      { table: `jobhook_tags_${randomUUID().replaceAll('-', '').slice(0, 12)}`, sweepIntervalMs: false },
    );
    await store.migrate();
    return store;
  };

  /** handle() over the pool; a fresh store and receiver when it wraps, so every call binds and is handled. */
  const task = (kind, where) => {
    const tagged = where !== 'none';
    let receiver;
    let next = 0;
    let refreshing;
    const fresh = async () => {
      const store = await makeStore(kind);
      closers.push(() => store.close());
      receiver = createReceiver({
        publicKeys: pem,
        store: where === 'process' ? withoutBinding(store) : store,
        logger: silentLogger,
        ...(tagged ? { recipientSecret: SECRET, recipientUrl: URL } : {}),
        maxEventAgeMs: false,
        onEvent: () => {},
      });
      next = 0;
    };
    return async () => {
      if (receiver === undefined || next >= POOL) {
        refreshing ??= fresh().then(() => {
          refreshing = undefined;
        });
        await refreshing;
      }
      const res = await receiver.handle({ method: 'POST', ...deliveries[next++] });
      if (res.status !== 200 || res.outcome.kind !== 'handled')
        throw new Error(`tag-binding bench (${kind}, ${where}): ${res.status} ${res.body}`);
    };
  };

  const rows = [];
  try {
    for (const kind of ['memory', 'redis', 'postgres']) {
      for (const concurrency of [1, IN_FLIGHT]) {
        const mode = concurrency === 1 ? 'sequential' : `${concurrency} in flight`;
        log(`  ${kind}, ${mode}: none vs tagged${kind === 'memory' ? '' : ' vs tagged, bound in the process'}…`);
        // The memory store's wrapper would also lose its same-turn claims: no "in process" task there.
        const [none, inStore, inProcess] = await compareAsync(
          [
            { name: 'none', fn: task(kind, 'none'), concurrency },
            { name: 'tagged', fn: task(kind, 'store'), concurrency },
            ...(kind === 'memory' ? [] : [{ name: 'in process', fn: task(kind, 'process'), concurrency }]),
          ],
          { ...settings, batchMs: 100 },
        );
        rows.push({ kind, mode, none, inStore, inProcess });
      }
    }
  } finally {
    for (const close of closers) await close().catch(() => {});
    await pool.end();
    await Promise.all([redis.stop(), postgres.stop()]);
  }
  const ms = (r) => (r === undefined ? '–' : (r.nsPerOp / 1e6).toFixed(3));
  const perSec = (r) => (r === undefined ? '–' : withRme(ops(r.opsPerSec), r.rme));
  const text = table(
    [
      { header: 'store', align: 'left' },
      { header: 'mode', align: 'left' },
      { header: 'none, handle/s' },
      { header: 'ms' },
      { header: 'tagged, handle/s' },
      { header: 'ms' },
      { header: 'tagged, in process, handle/s' },
      { header: 'ms' },
      { header: 'tagged/none' },
      { header: 'tagged/in process' },
    ],
    rows.map((r) => [
      r.kind,
      r.mode,
      perSec(r.none),
      ms(r.none),
      perSec(r.inStore),
      ms(r.inStore),
      perSec(r.inProcess),
      ms(r.inProcess),
      ratio(r.inStore.opsPerSec / r.none.opsPerSec),
      r.inProcess === undefined ? '–' : ratio(r.inStore.opsPerSec / r.inProcess.opsPerSec),
    ]),
  );
  const notes = [...NOTES, `redis-server ${redis.version}; PostgreSQL ${postgres.version}.`];
  logResult(log, text, notes);
  return { text, notes, data: { pool: POOL, inFlight: IN_FLIGHT, rows } };
}
