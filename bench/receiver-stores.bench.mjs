// Group `receiver-stores`: receiver.handle() throughput on the Redis store vs the PostgreSQL store
// (@jobhook/postgres, transactional), in the same run, on 1 KB webhooks signed with RSA-2048, each a
// new job_id. Two handlers: none (the store's own cost), and one row inserted into PostgreSQL (through
// a pool with the Redis store, autocommit; through ctx.db with the Postgres store, in the job's
// transaction). Starts its own redis-server and PostgreSQL (durable defaults: fsync, synchronous
// commit) on this machine.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver } from '@jobhook/core';
import { signPayload } from '@jobhook/core/sign';
import { createRedisStore } from '@jobhook/core/redis';
import { buildTestEvent } from '@jobhook/core/testing';
import { createPostgresStore } from '@jobhook/postgres';
import { compareAsync } from './harness.mjs';
import { startPostgres } from './postgres-server.mjs';
import { startRedis } from './redis-server.mjs';
import { logResult, ops, ratio, table, withRme } from './report.mjs';

export const description =
  'receiver.handle()/s on the Redis store vs the PostgreSQL store (transactional), no write and one row inserted, 1 and 16 in flight';

const POOL = 4_000;
const IN_FLIGHT = 16;
/** Handled jobs of the round-trip count (outside the timed runs). */
const COUNTED_JOBS = 200;
/** Sent first by the handler's insert, to tell its round trip from the store's. */
const HANDLER_MARK = '/* handler */';
/** Each store on the + insert rows should handle at least this share of the Redis store's jobs/s. */
const TARGET = 0.8;

export const NOTES = [
  'handle = receiver.handle() of a signed 1 KB webhook with a new job_id: verify (RSA-2048), parse, then the store: Redis claim + complete (2 round trips); PostgreSQL `BEGIN; try-lock; read` then `done mark; COMMIT`, prepared statements (2 round trips on one connection, one more the first time a connection runs a job; one WAL flush).',
  `round trips per job: counted on ${COUNTED_JOBS} handled jobs before the timed runs, PostgreSQL as the queries its pg clients sent (a client sends its next query once the previous one is answered), Redis as the commands its ioredis client sent.`,
  "+ insert = the handler inserts one row (job_id, status) into job_results: with Redis through a pg pool (autocommit: its own WAL flush), with PostgreSQL through ctx.db (in the job's transaction: no extra flush).",
  `16 in flight = the sender's default delivery concurrency; the pg pools have ${IN_FLIGHT} connections.`,
  'redis-server without persistence; PostgreSQL with its durable defaults (fsync on, synchronous_commit on), both on the same 2-core machine as node, which also verifies every signature.',
];

/** A pg pool whose clients count the queries they send, the handler's (HANDLER_MARK) apart. */
function countingPool(url) {
  const sent = { store: 0, handler: 0 };
  const query = pg.Client.prototype.query;
  class CountingClient extends pg.Client {}
  CountingClient.prototype.query = function (...args) {
    const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
    if (String(text).startsWith(HANDLER_MARK)) sent.handler++;
    else sent.store++;
    return query.apply(this, args);
  };
  const pool = new pg.Pool({ connectionString: url, max: 2, Client: CountingClient });
  pool.on('error', () => {});
  return { pool, sent };
}

/**
 * Round trips of one handled job with a row inserted, per store: PostgreSQL's counted on its pg
 * clients, Redis's on its ioredis client (the handler's insert goes to PostgreSQL).
 */
async function countRoundTrips({ deliveries, pem, redisUrl, postgresUrl }) {
  const counted = deliveries.slice(0, COUNTED_JOBS);
  const insert = (db) => async (event) => {
    await db.query(`${HANDLER_MARK} INSERT INTO job_results (job_id, status) VALUES ($1, $2)`, [event.job_id, event.status]);
  };
  const handleAll = async (receiver) => {
    for (const delivery of counted) {
      const res = await receiver.handle({ method: 'POST', ...delivery });
      if (res.outcome.kind !== 'handled') throw new Error(`round-trip count: ${res.status} ${res.body}`);
    }
  };

  const { pool, sent } = countingPool(postgresUrl);
  const pgStore = createPostgresStore(
    { pool },
    { table: `jobhook_count_${randomUUID().replaceAll('-', '').slice(0, 12)}`, sweepIntervalMs: false },
  );
  await pgStore.migrate();
  Object.assign(sent, { store: 0, handler: 0 });
  await handleAll(
    createReceiver({ publicKeys: pem, store: pgStore, maxEventAgeMs: false, onEvent: (event, ctx) => insert(ctx.db)(event) }),
  );
  const postgres = { store: sent.store / counted.length, handler: sent.handler / counted.length };
  await pgStore.close();

  // The store's own ioredis client, counting the commands it sends (one each for claim and
  // complete: a Lua script, one round trip).
  const client = new Redis(redisUrl);
  const sendCommand = client.sendCommand.bind(client);
  let commands = 0;
  client.sendCommand = (...args) => {
    commands++;
    return sendCommand(...args);
  };
  const insertPool = countingPool(postgresUrl);
  const redisStore = createRedisStore({ redis: client, keyPrefix: `count-${randomUUID().slice(0, 8)}:` });
  const receiver = createReceiver({ publicKeys: pem, store: redisStore, maxEventAgeMs: false, onEvent: insert(insertPool.pool) });
  // One job first: the client connects and loads the store's scripts.
  await receiver.handle({ method: 'POST', ...deliveries[COUNTED_JOBS] });
  commands = 0;
  Object.assign(insertPool.sent, { store: 0, handler: 0 });
  await handleAll(receiver);
  const redis = { store: commands / counted.length, handler: insertPool.sent.handler / counted.length };
  await redisStore.close();
  await client.quit();
  await Promise.all([pool.end(), insertPool.pool.end()]);
  return { postgres, redis };
}

export async function run({ settings, log }) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = publicKey.export({ type: 'pkcs1', format: 'pem' });
  log(`  signing ${POOL.toLocaleString('en')} deliveries…`);
  const deliveries = [];
  for (let i = 0; i < POOL; i++) {
    const event = buildTestEvent({
      output: { raw_text: 'Facture n° 2026-11-22 — Café Crème, 2 × 3,50 € — 東京 📄 '.repeat(12), pages: 1 },
    });
    const signed = signPayload(event, privateKey);
    const headers = { 'content-type': 'application/json' };
    for (const [k, v] of Object.entries(signed.headers)) headers[k.toLowerCase()] = v;
    deliveries.push({ headers, rawBody: signed.body });
  }
  log('  starting redis-server and PostgreSQL…');
  const [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  const pool = new pg.Pool({ connectionString: postgres.url, max: IN_FLIGHT });
  // Clients still connected when the server stops at the end report it as an 'error' event.
  pool.on('error', () => {});
  await pool.query(
    'CREATE TABLE job_results (id bigserial PRIMARY KEY, job_id text NOT NULL, status text NOT NULL, handled_at timestamptz DEFAULT now())',
  );
  const closers = [];
  log(`  counting round trips on ${COUNTED_JOBS} jobs…`);
  const roundTrips = await countRoundTrips({ deliveries, pem, redisUrl: redis.url, postgresUrl: postgres.url });

  /**
   * A task: handle() over the pool of deliveries; when it wraps, a fresh store (new Redis key prefix,
   * new PostgreSQL table), so no call is a duplicate.
   */
  const task = (kind, insert) => {
    const freshStore = async () => {
      const store =
        kind === 'redis'
          ? createRedisStore({ redis: redis.url, keyPrefix: `bench-${randomUUID().slice(0, 8)}:` })
          : createPostgresStore(
              { pool },
              { table: `jobhook_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`, sweepIntervalMs: false },
            );
      await store.migrate?.();
      closers.push(() => store.close());
      return createReceiver({
        publicKeys: pem,
        store,
        maxEventAgeMs: false,
        onEvent: insert
          ? async (event, ctx) => {
              await (ctx.db ?? pool).query('INSERT INTO job_results (job_id, status) VALUES ($1, $2)', [event.job_id, event.status]);
            }
          : () => {},
      });
    };
    let receiver;
    let next = 0;
    let refreshing;
    return async () => {
      if (receiver === undefined || next >= POOL) {
        refreshing ??= freshStore().then((r) => {
          receiver = r;
          next = 0;
          refreshing = undefined;
        });
        await refreshing;
      }
      const res = await receiver.handle({ method: 'POST', ...deliveries[next++] });
      if (res.status !== 200 || res.outcome.kind !== 'handled')
        throw new Error(`receiver-stores bench (${kind}): ${res.status} ${res.body}`);
    };
  };

  const rows = [];
  try {
    for (const concurrency of [1, IN_FLIGHT]) {
      for (const insert of [false, true]) {
        const mode = `${concurrency === 1 ? 'sequential' : `${concurrency} in flight`}${insert ? ', + insert' : ', no write'}`;
        log(`  ${mode}: redis vs postgres…`);
        const [r, p] = await compareAsync(
          [
            { name: 'redis', fn: task('redis', insert), concurrency },
            { name: 'postgres', fn: task('postgres', insert), concurrency },
          ],
          { ...settings, batchMs: 100 },
        );
        rows.push({ mode, redis: r, postgres: p, ratio: p.opsPerSec / r.opsPerSec });
      }
    }
  } finally {
    for (const close of closers) await close().catch(() => {});
    await pool.end();
    await Promise.all([redis.stop(), postgres.stop()]);
  }
  const ms = (r) => (r.nsPerOp / 1e6).toFixed(2);
  const text = table(
    [
      { header: 'mode', align: 'left' },
      { header: 'redis handle/s' },
      { header: 'ms/handle' },
      { header: 'postgres handle/s' },
      { header: 'ms/handle' },
      { header: 'postgres/redis' },
    ],
    rows.map((r) => [
      r.mode,
      withRme(ops(r.redis.opsPerSec), r.redis.rme),
      ms(r.redis),
      withRme(ops(r.postgres.opsPerSec), r.postgres.rme),
      ms(r.postgres),
      ratio(r.ratio),
    ]),
  );
  const trips = (t) => String(Number(t.toFixed(2)));
  const tripsText = table(
    [{ header: 'store (+ insert)', align: 'left' }, { header: "store's round trips/job" }, { header: "handler's" }, { header: 'total' }],
    [
      [
        'redis (insert: autocommit, pg pool)',
        trips(roundTrips.redis.store),
        trips(roundTrips.redis.handler),
        trips(roundTrips.redis.store + roundTrips.redis.handler),
      ],
      [
        'postgres (insert: ctx.db)',
        trips(roundTrips.postgres.store),
        trips(roundTrips.postgres.handler),
        trips(roundTrips.postgres.store + roundTrips.postgres.handler),
      ],
    ],
  );
  const notes = [...NOTES, `redis-server ${redis.version}; PostgreSQL ${postgres.version}.`];
  const all = `${text}\n\n${tripsText}`;
  logResult(log, all, notes);
  const targets = rows
    .filter((r) => r.mode.endsWith('+ insert'))
    .map((r) => ({ name: `postgres/redis handle/s, ${r.mode}`, value: r.ratio, min: TARGET, met: r.ratio >= TARGET }));
  return {
    text: all,
    notes,
    targets,
    data: {
      pool: POOL,
      inFlight: IN_FLIGHT,
      redisVersion: redis.version,
      postgresVersion: postgres.version,
      rows,
      roundTripsPerJob: roundTrips,
    },
  };
}
