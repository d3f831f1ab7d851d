// The transactional mode on a real PostgreSQL, through the receiver: the handler's writes and the
// done mark commit together or not at all; a concurrent delivery is answered at once; a dropped
// connection rolls the transaction back; other libraries' transactions plug in through executeSql.
import { randomUUID } from 'node:crypto';
import { createReceiver, silentLogger as silent, type ReceiverResponse } from '@jobhook/core';
import { buildSignedRequest, createTestKeyPair, rejectionCode } from '@jobhook/core/testing';
import { CompiledQuery, Kysely, PostgresDialect, type Generated, type Transaction } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, pgExecutor, TRANSACTION_RETRY_AFTER_MS, type PostgresStore } from '../src/index.js';
import { handDrivenRunner, usePostgres } from './helpers/postgres-fixture.js';

const keys = createTestKeyPair();
const postgres = usePostgres({ max: 20 });

/** A fresh store table and results table. */
async function setup<S extends { migrate(): Promise<void>; close(): Promise<void> }>(
  make: (table: string) => S,
): Promise<{ store: S; results: string }> {
  const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
  const store = make(`jobhook_tx_${suffix}`);
  postgres.track(store);
  await store.migrate();
  const results = `results_${suffix}`;
  await postgres.pool.query(`CREATE TABLE ${results} (id bigserial PRIMARY KEY, job_id text NOT NULL, note text)`);
  return { store, results };
}

const rowsOf = async (results: string): Promise<Array<{ job_id: string; note: string }>> =>
  (await postgres.pool.query(`SELECT job_id, note FROM ${results} ORDER BY id`)).rows;

const summary = (res: ReceiverResponse): [number, string, string | undefined] => [res.status, res.outcome.kind, res.outcome.code];

describe('transactional mode (pg PoolClient as ctx.db)', () => {
  it('commits the handler write with the done mark; a redelivery is a duplicate, not run', async () => {
    const { store, results } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table }));
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      onEvent: async (event, ctx) => {
        await ctx.db.query(`INSERT INTO ${results} (job_id, note) VALUES ($1, $2)`, [event.job_id, event.status]);
      },
    });
    const request = buildSignedRequest();
    const first = await receiver.handle(request);
    const again = await receiver.handle(request);
    expect([summary(first), summary(again)]).toEqual([
      [200, 'handled', undefined],
      [200, 'duplicate', undefined],
    ]);
    expect(await rowsOf(results)).toEqual([{ job_id: first.event!.job_id, note: 'success' }]);
    const [mark] = (await postgres.pool.query(`SELECT done, token FROM ${store.table} WHERE job_id = $1`, [first.outcome.jobId])).rows;
    expect(mark).toEqual({ done: true, token: null });
  });

  it('a handler that throws after its insert: 500, no row, no done mark; the retry runs it and keeps one row', async () => {
    const { store, results } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table }));
    let calls = 0;
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      logger: silent,
      onEvent: async (event, ctx) => {
        await ctx.db.query(`INSERT INTO ${results} (job_id, note) VALUES ($1, $2)`, [event.job_id, `call ${++calls}`]);
        if (calls === 1) throw new Error('downstream failed after the insert');
      },
    });
    const request = buildSignedRequest();
    expect(summary(await receiver.handle(request))).toEqual([500, 'handler-failed', 'ERR_HANDLER_FAILED']);
    expect(await rowsOf(results)).toEqual([]);
    expect((await postgres.pool.query(`SELECT count(*)::int AS n FROM ${store.table}`)).rows[0].n).toBe(0);
    const retried = await receiver.handle(request);
    expect(summary(retried)).toEqual([200, 'handled', undefined]);
    expect(await rowsOf(results)).toEqual([{ job_id: retried.event!.job_id, note: 'call 2' }]);
  });

  it('a concurrent delivery is answered 503 at once while the transaction is open, and never runs the handler', async () => {
    const { store, results } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table }));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    let runs = 0;
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      onEvent: async (event, ctx) => {
        runs++;
        await ctx.db.query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [event.job_id]);
        entered();
        await gate;
      },
    });
    const request = buildSignedRequest();
    const first = receiver.handle(request);
    await inHandler;
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => receiver.handle(request)));
    expect(concurrent.map(summary)).toEqual(Array.from({ length: 5 }, () => [503, 'in-flight', 'ERR_JOB_IN_FLIGHT']));
    expect(concurrent[0]!.headers['retry-after']).toBe('30');
    release();
    expect(summary(await first)).toEqual([200, 'handled', undefined]);
    expect(summary(await receiver.handle(request))).toEqual([200, 'duplicate', undefined]);
    expect(runs).toBe(1);
    expect(await rowsOf(results)).toHaveLength(1);
  });

  it('a transaction whose connection dies mid-handler is rolled back by the server: the next delivery runs at once', async () => {
    const { store, results } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table }));
    const jobId = randomUUID();
    let concurrent: unknown;
    // What a killed receiver leaves: its transaction's insert and lock, then the connection drops.
    const dying = await store
      .runInTransaction(jobId, { doneTtlMs: 60_000 }, async (db) => {
        await db.query(`INSERT INTO ${results} (job_id, note) VALUES ($1, 'lost')`, [jobId]);
        concurrent = await store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => undefined);
        const pid = (await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
        await postgres.pool.query('SELECT pg_terminate_backend($1)', [pid]);
        await db.query('SELECT 1'); // the connection is gone: rejects
      })
      .catch((err: unknown) => err);
    expect(concurrent).toEqual({ state: 'in-flight', retryAfterMs: TRANSACTION_RETRY_AFTER_MS });
    // The handler's own query failed on the dead connection: rolled back (the server did it already).
    expect((dying as { state?: string }).state).toBe('rolled-back');
    const retried = await store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async (db) => {
      await db.query(`INSERT INTO ${results} (job_id, note) VALUES ($1, 'kept')`, [jobId]);
    });
    expect(retried).toEqual({ state: 'committed' });
    expect(await rowsOf(results)).toEqual([{ job_id: jobId, note: 'kept' }]);
    expect(await store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => undefined)).toEqual({ state: 'done' });
  });

  it('a deferred constraint the handler broke fails the commit: nothing kept, rolled back as the handler failing (500, the sender retries)', async () => {
    const { store, results } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table }));
    await postgres.pool.query(`ALTER TABLE ${results} ADD CONSTRAINT ${results}_one_per_job UNIQUE (job_id) DEFERRABLE INITIALLY DEFERRED`);
    const jobId = randomUUID();
    await postgres.pool.query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [jobId]);
    // The deferred constraint fails at COMMIT, after the handler and the done mark succeeded.
    const attempt = store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async (db) => {
      await db.query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [jobId]);
    });
    const result = await attempt;
    expect(result.state).toBe('rolled-back');
    expect(String((result as { error?: Error }).error?.message)).toMatch(
      /constraint the handler broke failed at COMMIT \(SQLSTATE 23505\)/,
    );
    expect(await rowsOf(results)).toHaveLength(1);
    expect((await postgres.pool.query(`SELECT count(*)::int AS n FROM ${store.table}`)).rows[0].n).toBe(0);
  });

  it('done marks expire after doneTtlMs, and sweep() deletes expired rows', async () => {
    const { store } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table, sweepIntervalMs: false }));
    const [short, long] = [randomUUID(), randomUUID()];
    await store.runInTransaction(short, { doneTtlMs: 1 }, async () => undefined);
    await store.runInTransaction(long, { doneTtlMs: 60_000 }, async () => undefined);
    await postgres.pool.query('SELECT pg_sleep(0.01)'); // past the 1 ms TTL on the server's clock
    expect(await store.sweep({ limit: 1 })).toBe(1);
    expect((await postgres.pool.query(`SELECT job_id FROM ${store.table}`)).rows).toEqual([{ job_id: long }]);
    expect(await store.runInTransaction(short, { doneTtlMs: 60_000 }, async () => undefined)).toEqual({ state: 'committed' });
    expect(await store.runInTransaction(long, { doneTtlMs: 60_000 }, async () => undefined)).toEqual({ state: 'done' });
  });

  it('sweeps by itself every sweepIntervalMs', async () => {
    const { store } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table, sweepIntervalMs: 50 }));
    await Promise.all([randomUUID(), randomUUID()].map((id) => store.runInTransaction(id, { doneTtlMs: 1 }, async () => undefined)));
    await expect.poll(async () => (await postgres.pool.query(`SELECT count(*)::int AS n FROM ${store.table}`)).rows[0].n).toBe(0);
  });

  it('migrate() is idempotent and safe to run from several instances at once; schema and table are configurable', async () => {
    const table = `jobhook_mig_${randomUUID().replaceAll('-', '').slice(0, 8)}`;
    const many = Array.from({ length: 4 }, () => createPostgresStore({ pool: postgres.pool }, { table, schema: 'jobhook_migrate_test' }));
    postgres.track(...many);
    await Promise.all(many.map((s) => s.migrate()));
    await many[0]!.migrate();
    expect(many[0]!.table).toBe(`jobhook_migrate_test.${table}`);
    const { rows } = await postgres.pool.query(`SELECT obj_description('jobhook_migrate_test.${table}'::regclass) AS comment`);
    expect(rows[0].comment).toBe('jobhook idempotency store, schema v1');
  });

  it('refuses bad options with ERR_OPTION_INVALID, and work after close with ERR_STORE_UNAVAILABLE', async () => {
    const bad = [
      () => createPostgresStore({ pool: postgres.pool }, { table: 'x; DROP TABLE y' }),
      () => createPostgresStore({ pool: postgres.pool }, { schema: '' }),
      () => createPostgresStore({ connectionString: 'mysql://x' }),
      () => createPostgresStore({} as never),
      () => createPostgresStore({ pool: postgres.pool }, { sweepIntervalMs: 0 }),
    ];
    for (const make of bad) expect(await rejectionCode(Promise.resolve().then(make))).toBe('ERR_OPTION_INVALID');
    const { store } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table }));
    await store.close();
    expect(await rejectionCode(store.runInTransaction(randomUUID(), { doneTtlMs: 1000 }, async () => undefined))).toBe(
      'ERR_STORE_UNAVAILABLE',
    );
    expect(await rejectionCode(store.sweep())).toBe('ERR_STORE_UNAVAILABLE');
  });

  it('an unreachable database answers 503 ERR_STORE_UNAVAILABLE', async () => {
    const store = createPostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/none' }, { operationTimeoutMs: 500 });
    postgres.track(store);
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, store, logger: silent, onEvent: async () => undefined });
    expect(summary(await receiver.handle(buildSignedRequest()))).toEqual([503, 'store-unavailable', 'ERR_STORE_UNAVAILABLE']);
    expect(await rejectionCode(store.claim(randomUUID(), { leaseMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
  });
});

describe('transactional: false', () => {
  it('the receiver claims with a lease and completes; ctx.db is undefined', async () => {
    const { store } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table, transactional: false }));
    expect('runInTransaction' in store).toBe(false);
    const seen: unknown[] = [];
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, store, onEvent: (_event, ctx) => void seen.push(ctx.db) });
    const request = buildSignedRequest();
    expect(summary(await receiver.handle(request))).toEqual([200, 'handled', undefined]);
    expect(summary(await receiver.handle(request))).toEqual([200, 'duplicate', undefined]);
    expect(seen).toEqual([undefined]);
  });
});

describe('other libraries through the executeSql adapter', () => {
  it('a TransactionRunner of hand-driven pg clients and pgExecutor: the done mark runs on the runner transaction', async () => {
    const seen: string[] = [];
    const runner = handDrivenRunner(postgres.pool, {
      executor: (client) => {
        const executor = pgExecutor(client);
        return {
          executeSql: (text, values) => {
            seen.push(text.trim().split(/\s+/)[0]!);
            return executor.executeSql(text, values);
          },
        };
      },
    });
    const { store, results } = await setup((table) => createPostgresStore({ pool: postgres.pool }, { table, transaction: runner }));
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      onEvent: async (event, ctx) => void (await ctx.db.query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [event.job_id])),
    });
    const request = buildSignedRequest();
    expect(summary(await receiver.handle(request))).toEqual([200, 'handled', undefined]);
    expect(summary(await receiver.handle(request))).toEqual([200, 'duplicate', undefined]);
    expect(seen).toEqual(['SELECT', 'SELECT', 'INSERT', 'SELECT', 'SELECT']);
    expect(await rowsOf(results)).toHaveLength(1);
  });

  it('Kysely: ctx.db is the Kysely transaction; a throw rolls back its insert and the done mark', async () => {
    interface Database {
      [table: string]: { id: Generated<number>; job_id: string; note: string | null };
    }
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgres.server.url }) }) });
    try {
      let store!: PostgresStore<Transaction<Database>>;
      const setupResult = await setup((table) => {
        store = createPostgresStore(
          { pool: postgres.pool },
          {
            table,
            transaction: (body) =>
              db
                .transaction()
                .execute((trx) => body(trx, { executeSql: (text, values) => trx.executeQuery(CompiledQuery.raw(text, values)) })),
          },
        );
        return store;
      });
      const { results } = setupResult;
      let calls = 0;
      const receiver = createReceiver({
        publicKeys: keys.publicKeyPem,
        store,
        logger: silent,
        onEvent: async (event, ctx) => {
          await ctx.db
            .insertInto(results)
            .values({ job_id: event.job_id, note: `call ${++calls}` })
            .execute();
          if (calls === 1) throw new Error('fails after the insert');
        },
      });
      const request = buildSignedRequest();
      expect(summary(await receiver.handle(request))).toEqual([500, 'handler-failed', 'ERR_HANDLER_FAILED']);
      expect(await rowsOf(results)).toEqual([]);
      expect(summary(await receiver.handle(request))).toEqual([200, 'handled', undefined]);
      expect(summary(await receiver.handle(request))).toEqual([200, 'duplicate', undefined]);
      expect((await rowsOf(results)).map((r) => r.note)).toEqual(['call 2']);
    } finally {
      await db.destroy();
    }
  });
});
