// What one job costs in round trips on a real PostgreSQL (counted on the pg clients: a client sends
// its next query only once the previous one is answered), that the job id in the batched statements
// is data whatever it holds, and that the read after the lock sees the done mark of the transaction
// that held the lock before, even when that one committed while the lock statement was running.
import { randomInt, randomUUID } from 'node:crypto';
import { createReceiver, type ReceiverResponse } from '@jobhook/core';
import { buildSignedRequest, createTestKeyPair, rejectionCode } from '@jobhook/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions, type TransactionRunner } from '../src/index.js';
import { handDrivenRunner, usePostgres } from './helpers/postgres-fixture.js';

const keys = createTestKeyPair();
const postgres = usePostgres({ max: 10 });

const unique = (): string => randomUUID().replaceAll('-', '').slice(0, 12);
const summary = (res: ReceiverResponse): [number, string] => [res.status, res.outcome.kind];
/** Marks the handler's own statements, so they can be told from the store's. */
const HANDLER = '/* handler */';

/** A pool whose clients record the text of every query they send (one query, one round trip). */
function countingPool(config: pg.PoolConfig = {}): { pool: pg.Pool; sent: string[] } {
  const sent: string[] = [];
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  class CountingClient extends pg.Client {}
  CountingClient.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    sent.push(String(text));
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  return { pool: postgres.server.pool({ max: 4, ...config, Client: CountingClient }), sent };
}

/** A migrated store on `pool` with a table of its own, and a results table. */
async function setup(pool: pg.Pool, options: PostgresStoreOptions<pg.PoolClient> = {}, table = `jobhook_rt_${unique()}`) {
  // Typed as the runner overload: `transaction` may be absent, which the store takes as its own runner.
  const store: PostgresStore<pg.PoolClient> = createPostgresStore({ pool }, {
    table,
    sweepIntervalMs: false,
    ...options,
  } as PostgresStoreOptions<pg.PoolClient> & { transaction: TransactionRunner<pg.PoolClient> });
  postgres.track(store);
  await store.migrate();
  const results = `results_${table}`;
  await postgres.pool.query(`CREATE TABLE IF NOT EXISTS ${results} (id bigserial PRIMARY KEY, job_id text NOT NULL)`);
  const rows = async (): Promise<string[]> =>
    (await postgres.pool.query(`SELECT job_id FROM ${results} ORDER BY id`)).rows.map((r: { job_id: string }) => r.job_id);
  return { store, results, rows };
}

/** The round trips `deliver` cost the store (the handler's own statements left out). */
async function storeTrips(sent: string[], deliver: () => Promise<unknown>): Promise<string[]> {
  const from = sent.length;
  await deliver();
  return sent.slice(from).filter((text) => !text.startsWith(HANDLER));
}

/** Runs `connections` jobs at once, so that many connections of the pool have the store's statements prepared. */
async function warm(store: PostgresStore<pg.PoolClient>, connections: number): Promise<void> {
  let arrived = 0;
  let all!: () => void;
  const together = new Promise<void>((resolve) => (all = resolve));
  const meet = async (): Promise<void> => {
    if (++arrived === connections) all();
    await together;
  };
  await Promise.all(Array.from({ length: connections }, () => store.runInTransaction(randomUUID(), { doneTtlMs: 60_000 }, meet)));
}

describe('round trips per job', () => {
  it("the store's own runner: 2 per job handled and 2 per duplicate, the handler's statements on top", async () => {
    const { pool, sent } = countingPool({ max: 1 });
    const { store, results, rows } = await setup(pool);
    // The first job on a connection prepares the store's statements there: one round trip, once.
    const prepares = await storeTrips(sent, () => warm(store, 1));
    expect(prepares.map((text) => text.slice(0, 8))).toEqual(['PREPARE ', 'BEGIN; E', 'EXECUTE ']);
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      onEvent: async (_event, ctx) => {
        await ctx.db.query(`${HANDLER} INSERT INTO ${results} (job_id) VALUES ($1)`, [ctx.jobId]);
      },
    });
    const requests = Array.from({ length: 5 }, () => buildSignedRequest());
    for (const request of requests) {
      const trips = await storeTrips(sent, async () => expect(summary(await receiver.handle(request))).toEqual([200, 'handled']));
      expect(trips).toHaveLength(2);
      expect(trips.length).toBeLessThanOrEqual(3);
      expect([trips[0]!.startsWith('BEGIN; EXECUTE jobhook_'), trips[1]!.endsWith('; COMMIT')]).toEqual([true, true]);
    }
    for (const request of requests) {
      const trips = await storeTrips(sent, async () => expect(summary(await receiver.handle(request))).toEqual([200, 'duplicate']));
      expect(trips.map((text) => text.slice(0, 6))).toEqual(['BEGIN;', 'COMMIT']);
    }
    expect(await rows()).toEqual(requests.map((r) => r.event.job_id.toLowerCase()));
    // Every query of the handler was the handler's one insert: nothing else went through its client.
    expect(sent.filter((text) => text.startsWith(HANDLER))).toHaveLength(5);
  });

  it('a delivery of a job whose transaction is open: 2 (the lock not taken, then COMMIT); the lock is the one a runner of your own takes', async () => {
    const { pool, sent } = countingPool({ max: 2 });
    const { store } = await setup(pool);
    await warm(store, 2);
    const jobId = randomUUID();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const first = store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => {
      entered();
      await gate;
    });
    await inHandler;
    let answer: unknown;
    const trips = await storeTrips(sent, async () => {
      answer = await store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => undefined);
    });
    // A store on the same table with a runner of your own locks the same key (its job id a parameter).
    const other = createPostgresStore(
      { pool: postgres.pool },
      { table: store.table, sweepIntervalMs: false, transaction: handDrivenRunner(postgres.pool) },
    );
    postgres.track(other);
    const otherAnswer = await other.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => undefined);
    release();
    expect([answer, otherAnswer, await first]).toEqual([
      { state: 'in-flight', retryAfterMs: 30_000 },
      { state: 'in-flight', retryAfterMs: 30_000 },
      { state: 'committed' },
    ]);
    expect(trips.map((text) => text.slice(0, 6))).toEqual(['BEGIN;', 'COMMIT']);
  });

  it('a connection that lost the prepared statements (DISCARD ALL, PgBouncer in transaction mode): the job runs on plain statements, and so do the next', async () => {
    const { pool, sent } = countingPool({ max: 1 });
    const { store, results, rows } = await setup(pool);
    await warm(store, 1);
    const discard = await pool.connect();
    await discard.query('DISCARD ALL');
    discard.release();
    const ids = [randomUUID(), randomUUID()];
    const work = (jobId: string) => async (db: pg.PoolClient) => {
      await db.query(`${HANDLER} INSERT INTO ${results} (job_id) VALUES ($1)`, [jobId]);
    };
    let answer: unknown;
    const fellBack = await storeTrips(sent, async () => {
      answer = await store.runInTransaction(ids[0]!, { doneTtlMs: 60_000 }, work(ids[0]!));
    });
    const next = await storeTrips(sent, () => store.runInTransaction(ids[1]!, { doneTtlMs: 60_000 }, work(ids[1]!)));
    expect([answer, fellBack.map((text) => text.slice(0, 14)), next.map((text) => text.slice(0, 14))]).toEqual([
      { state: 'committed' },
      ['BEGIN; EXECUTE', 'ROLLBACK', 'BEGIN; SELECT ', 'INSERT INTO "j'],
      ['BEGIN; SELECT ', 'INSERT INTO "j'],
    ]);
    expect(await rows()).toEqual(ids);
  });

  it("a runner of your own: its BEGIN and COMMIT around the store's try-lock, read and done mark, 5 per job handled", async () => {
    const { pool, sent } = countingPool();
    const { store, results } = await setup(pool, { transaction: handDrivenRunner(pool) });
    const jobId = randomUUID();
    const work = async (db: pg.PoolClient): Promise<void> => {
      await db.query(`${HANDLER} INSERT INTO ${results} (job_id) VALUES ($1)`, [jobId]);
    };
    const handled = await storeTrips(sent, () => store.runInTransaction(jobId, { doneTtlMs: 60_000 }, work));
    const duplicate = await storeTrips(sent, () => store.runInTransaction(jobId, { doneTtlMs: 60_000 }, work));
    expect(handled.map((text) => text.trim().split(/\s+/)[0])).toEqual(['BEGIN', 'SELECT', 'SELECT', 'INSERT', 'COMMIT']);
    expect(duplicate.map((text) => text.trim().split(/\s+/)[0])).toEqual(['BEGIN', 'SELECT', 'SELECT', 'COMMIT']);
  });
});

describe('job ids in the batched statements', () => {
  const hostile = (sentinel: string): string[] => [
    `x'; DROP TABLE ${sentinel}; --`,
    `a\\'; DROP TABLE ${sentinel}; --`,
    "\\'",
    '\\',
    "E'\\x27'",
    "''",
    '$1',
    `$$; DROP TABLE ${sentinel}; $$`,
    'café 東京 📄',
  ];

  // A session set to client_encoding SJIS (pg's startup packet says UTF8, a SET on connect overrides
  // it) reads the UTF-8 bytes pg sends as SJIS: 0x81 (the end of "Á") starts a two-byte character
  // that swallows the next byte, the first of the two backslashes an escaped literal would write, and
  // leaves \' (PostgreSQL refuses it in such encodings by default, so the job would fail for ever).
  const sessions: Array<[string, pg.PoolConfig, string?]> = [
    ['standard_conforming_strings on', { options: '-c standard_conforming_strings=on' }],
    ['standard_conforming_strings off', { options: '-c standard_conforming_strings=off -c escape_string_warning=off' }],
    ['client_encoding SJIS', {}, "SET client_encoding = 'SJIS'"],
  ];
  for (const [name, config, onConnect] of sessions) {
    it(`quotes, backslashes and SQL in a job id are data (${name}): stored as given, found again, nothing dropped`, async () => {
      const pool = postgres.server.pool({ ...config, max: 2 });
      if (onConnect !== undefined) pool.on('connect', (client) => void client.query(onConnect));
      const { store } = await setup(pool);
      const sentinel = `sentinel_${unique()}`;
      await postgres.pool.query(`CREATE TABLE ${sentinel} (id int)`);
      const ids = [`Á\\', 0)); DROP TABLE ${sentinel}; --`, `Á\\'); DROP TABLE ${sentinel}; --`, ...hostile(sentinel)];
      let runs = 0;
      const work = async (): Promise<void> => void runs++;
      for (const jobId of ids) expect(await store.runInTransaction(jobId, { doneTtlMs: 60_000 }, work)).toEqual({ state: 'committed' });
      for (const jobId of ids) expect(await store.runInTransaction(jobId, { doneTtlMs: 60_000 }, work)).toEqual({ state: 'done' });
      // Read back through a UTF-8 connection: the ids as the store was given them.
      const stored = (await postgres.pool.query(`SELECT job_id FROM ${store.table} WHERE done`)).rows.map(
        (r: { job_id: string }) => r.job_id,
      );
      expect([stored.sort(), runs]).toEqual([[...ids].sort(), ids.length]);
      expect((await postgres.pool.query('SELECT to_regclass($1) IS NOT NULL AS kept', [sentinel])).rows[0].kept).toBe(true);
      await postgres.pool.query(`DROP TABLE ${sentinel}`);
    });
  }

  it('a job id with a NUL (PostgreSQL text cannot hold one) is refused before any statement: ERR_OPTION_INVALID', async () => {
    const { pool, sent } = countingPool();
    const { store } = await setup(pool);
    const before = sent.length;
    let runs = 0;
    expect(await rejectionCode(store.runInTransaction("a\0'; DROP TABLE x; --", { doneTtlMs: 1000 }, async () => void runs++))).toBe(
      'ERR_OPTION_INVALID',
    );
    expect(await rejectionCode(store.claim('a\0b', { leaseMs: 1000 }))).toBe('ERR_OPTION_INVALID');
    expect([sent.length - before, runs]).toEqual([0, 0]);
  });
});

describe('the read after the lock sees the done mark of the previous holder', () => {
  // A second instance whose lock statement, once its snapshot is taken, waits on `gate` (a lock the
  // test holds) before it can try the job's lock: its search_path puts a hashtextextended that waits
  // first. The first instance commits the job's done mark meanwhile, then the gate opens. A read in
  // the lock's statement, or before it, would use a snapshot without that commit and run the job again.
  const schema = `jobhook_slow_lock_${unique()}`;
  const gate = randomInt(1, 2 ** 31 - 1);
  beforeAll(async () => {
    await postgres.pool.query(`CREATE SCHEMA ${schema}`);
    await postgres.pool.query(
      `CREATE FUNCTION ${schema}.hashtextextended(key text, seed bigint) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
       BEGIN
         PERFORM pg_advisory_xact_lock_shared(${gate});
         RETURN pg_catalog.hashtextextended(key, seed);
       END $$`,
    );
  });
  afterAll(async () => {
    await postgres.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  const waitingOnGate = async (): Promise<number> =>
    (
      await postgres.pool.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = 0 AND objid::bigint = $1 AND objsubid = 1",
        [gate],
      )
    ).rows[0].n;

  for (const runner of ['the store’s own runner', 'a runner of your own'] as const) {
    it(`${runner}: two deliveries of one job, the second's lock taken after the first committed: a duplicate, the handler run once`, async () => {
      const url = new URL(postgres.server.url);
      url.searchParams.set('options', `-c search_path=${schema},pg_catalog,public`);
      const slowPool = postgres.server.pool({ connectionString: url.toString(), max: 2 });
      const table = `jobhook_rt_${unique()}`;
      const first = await setup(postgres.pool, {}, table);
      const second: PostgresStore<pg.PoolClient> = createPostgresStore({ pool: slowPool }, {
        table,
        sweepIntervalMs: false,
        operationTimeoutMs: 600_000,
        ...(runner === 'a runner of your own' ? { transaction: handDrivenRunner(slowPool) } : {}),
      } as PostgresStoreOptions<pg.PoolClient> & { transaction: TransactionRunner<pg.PoolClient> });
      postgres.track(second);
      let runs = 0;
      let release!: () => void;
      const handlerGate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      const onEvent = async (_event: unknown, ctx: { jobId: string; db: pg.PoolClient }): Promise<void> => {
        runs++;
        await ctx.db.query(`INSERT INTO ${first.results} (job_id) VALUES ($1)`, [ctx.jobId]);
        entered();
        await handlerGate;
      };
      const receiverA = createReceiver({ publicKeys: keys.publicKeyPem, store: first.store, onEvent });
      const receiverB = createReceiver({ publicKeys: keys.publicKeyPem, store: second, onEvent });
      const request = buildSignedRequest();

      const holder = await postgres.pool.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [gate]);
        const a = receiverA.handle(request);
        await inHandler;
        const b = receiverB.handle(request);
        await expect.poll(waitingOnGate).toBe(1);
        release();
        expect(summary(await a)).toEqual([200, 'handled']);
        await holder.query('SELECT pg_advisory_unlock($1)', [gate]);
        expect(summary(await b)).toEqual([200, 'duplicate']);
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()');
        holder.release();
      }
      expect([runs, await first.rows()]).toEqual([1, [request.event.job_id.toLowerCase()]]);
    });
  }
});
