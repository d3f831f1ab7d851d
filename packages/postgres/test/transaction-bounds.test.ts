// What bounds and refuses a job's transaction on a real PostgreSQL: an exhausted pool or a hung
// statement of the store answers ERR_STORE_UNAVAILABLE after operationTimeoutMs (the handler never
// starts late); a handler that swallowed a failed statement is a handler failure, not an outage;
// a transaction at another isolation level than READ COMMITTED is refused; sweeps never overlap.
import { randomUUID } from 'node:crypto';
import { createReceiver, silentLogger, type ReceiverResponse } from '@jobhook/core';
import { buildSignedRequest, createTestKeyPair, rejectionCode } from '@jobhook/core/testing';
import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions, type TransactionRunner } from '../src/index.js';
import { abortedByWork } from '../src/store-errors.js';
import { handDrivenRunner, usePostgres } from './helpers/postgres-fixture.js';

const keys = createTestKeyPair();
const postgres = usePostgres({ max: 10 });
afterEach(() => {
  vi.useRealTimers();
});

const unique = (): string => randomUUID().replaceAll('-', '').slice(0, 12);
const summary = (res: ReceiverResponse): [number, string, string | undefined] => [res.status, res.outcome.kind, res.outcome.code];

/** A migrated store on `storePool` with a table of its own, and a results table. */
async function setup(storePool: pg.Pool, options: PostgresStoreOptions<pg.PoolClient> = {}) {
  const suffix = unique();
  // Typed as the runner overload: `transaction` may be absent, which the store takes as its own runner.
  const store: PostgresStore<pg.PoolClient> = createPostgresStore({ pool: storePool }, {
    table: `jobhook_bounds_${suffix}`,
    ...options,
  } as PostgresStoreOptions<pg.PoolClient> & { transaction: TransactionRunner<pg.PoolClient> });
  postgres.track(store);
  await store.migrate();
  const results = `results_${suffix}`;
  await postgres.pool.query(`CREATE TABLE ${results} (id bigserial PRIMARY KEY, job_id text NOT NULL)`);
  const count = async (): Promise<number> => (await postgres.pool.query(`SELECT count(*)::int AS n FROM ${results}`)).rows[0].n;
  return { store, results, count };
}

/** A client of the test's own pool holding `sql` in an open transaction until `release()`. */
async function holding(sql: string, values: unknown[] = []): Promise<{ release(): Promise<void> }> {
  const client = await postgres.pool.connect();
  await client.query('BEGIN');
  await client.query(sql, values);
  return {
    async release() {
      await client.query('ROLLBACK');
      client.release();
    },
  };
}

describe('operationTimeoutMs bounds the store parts of a transaction', () => {
  it('an exhausted pool (connectionTimeoutMillis 0): ERR_STORE_UNAVAILABLE, the handler never starts, the late client goes back', async () => {
    const small = postgres.server.pool({ max: 1 }); // connectionTimeoutMillis: pg's default, 0 (wait forever)
    const { store, results, count } = await setup(small, { operationTimeoutMs: 100 });
    const busy = await small.connect();
    let runs = 0;
    const attempt = store.runInTransaction(randomUUID(), { doneTtlMs: 60_000 }, async () => void runs++);
    const error = await attempt.catch((err: unknown) => err as Error);
    busy.release();
    expect([(error as { code?: string }).code, (error as Error).message]).toEqual([
      'ERR_STORE_UNAVAILABLE',
      expect.stringMatching(/ in 100 ms|than 100 ms/),
    ]);
    // The client the timed-out wait got later is back in the pool: the next job can use it.
    const next = randomUUID();
    const done = await store.runInTransaction(next, { doneTtlMs: 60_000 }, async (db) => {
      await db.query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [next]);
    });
    expect([done, runs, await count(), small.totalCount]).toEqual([{ state: 'committed' }, 0, 1, 1]);
  });

  it('through the receiver: 503 ERR_STORE_UNAVAILABLE long before handlerTimeoutMs, not ERR_HANDLER_TIMEOUT', async () => {
    const small = postgres.server.pool({ max: 1 });
    const { store } = await setup(small, { operationTimeoutMs: 100 });
    const busy = await small.connect();
    try {
      const receiver = createReceiver({
        publicKeys: keys.publicKeyPem,
        store,
        logger: silentLogger,
        handlerTimeoutMs: 600_000,
        onEvent: async () => undefined,
      });
      expect(summary(await receiver.handle(buildSignedRequest()))).toEqual([503, 'store-unavailable', 'ERR_STORE_UNAVAILABLE']);
    } finally {
      busy.release();
    }
  });

  it('a read that hangs (table locked): ERR_STORE_UNAVAILABLE; the handler does not start once the lock goes', async () => {
    const { store } = await setup(postgres.pool, { operationTimeoutMs: 100 });
    const jobId = randomUUID();
    const lock = await holding(`LOCK TABLE ${store.table} IN ACCESS EXCLUSIVE MODE`);
    let runs = 0;
    const attempt = store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => void runs++);
    expect(await rejectionCode(attempt)).toBe('ERR_STORE_UNAVAILABLE');
    await lock.release();
    // The late transaction rolls back before the handler: the job's lock is free again, the job not done.
    await expect.poll(() => store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => undefined)).toEqual({ state: 'committed' });
    expect(runs).toBe(0);
  });

  it('a done mark that hangs (row locked): ERR_STORE_UNAVAILABLE; when it lands later, it commits and the retry is a duplicate', async () => {
    const { store, results, count } = await setup(postgres.pool, { operationTimeoutMs: 100 });
    const jobId = randomUUID();
    await postgres.pool.query(`INSERT INTO ${store.table} (job_id, done, expires_at) VALUES ($1, false, now() - interval '1 hour')`, [
      jobId,
    ]);
    const rowLock = await holding(`SELECT 1 FROM ${store.table} WHERE job_id = $1 FOR UPDATE`, [jobId]);
    const attempt = store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async (db) => {
      await db.query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [jobId]);
    });
    expect(await rejectionCode(attempt)).toBe('ERR_STORE_UNAVAILABLE');
    await rowLock.release();
    await expect.poll(() => store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async () => undefined)).toEqual({ state: 'done' });
    expect(await count()).toBe(1);
  });
});

describe('a transaction aborted by what ran in it', () => {
  it('a handler that catches a failed ctx.db statement and returns: 500 ERR_HANDLER_FAILED saying why; the retry runs it', async () => {
    const { store, results, count } = await setup(postgres.pool);
    let calls = 0;
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      logger: silentLogger,
      onEvent: async (_event, ctx) => {
        if (++calls === 1) await ctx.db.query('SELECT * FROM no_such_table').catch(() => undefined);
        await ctx.db.query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [ctx.jobId]).catch(() => undefined);
      },
    });
    const request = buildSignedRequest();
    expect(summary(await receiver.handle(request))).toEqual([500, 'handler-failed', 'ERR_HANDLER_FAILED']);
    expect(await count()).toBe(0);
    expect(summary(await receiver.handle(request))).toEqual([200, 'handled', undefined]);
    expect(await count()).toBe(1);

    const jobId = randomUUID();
    const result = await store.runInTransaction(jobId, { doneTtlMs: 60_000 }, async (db) => {
      await db.query('SELECT 1/0').catch(() => undefined);
    });
    expect(result.state === 'rolled-back' && (result.error as Error).message).toMatch(
      /^a statement of the handler failed inside the transaction; the transaction was aborted \(SQLSTATE 25P02\)/,
    );
  });

  it('serialization failures, deadlocks and deferred constraints (class 23) count as the handler failing; other errors do not', () => {
    const pgError = (code: string): Error => Object.assign(new Error('pg'), { code });
    expect(abortedByWork(pgError('40001'))?.message).toMatch(/serialization failure \(SQLSTATE 40001\)/);
    expect(abortedByWork(pgError('40P01'))?.message).toMatch(/deadlock .* \(SQLSTATE 40P01\)/);
    expect(abortedByWork(new Error('wrapped', { cause: pgError('25P02') }))?.message).toMatch(/SQLSTATE 25P02/);
    expect(abortedByWork(pgError('23505'))?.message).toMatch(/constraint the handler broke failed at COMMIT \(SQLSTATE 23505\)/);
    expect([abortedByWork(pgError('08006')), abortedByWork(pgError('57P01')), abortedByWork(new Error('x'))]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('isolation level', () => {
  it('a runner transaction at REPEATABLE READ is refused before the handler runs: ERR_STORE_UNAVAILABLE naming read committed', async () => {
    const runner = handDrivenRunner(postgres.pool, { begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ' });
    const { store } = await setup(postgres.pool, { transaction: runner });
    let runs = 0;
    const error = await store.runInTransaction(randomUUID(), { doneTtlMs: 60_000 }, async () => void runs++).catch((err: unknown) => err);
    expect([(error as { code?: string }).code, (error as Error).message, runs]).toEqual([
      'ERR_STORE_UNAVAILABLE',
      expect.stringMatching(/isolation level repeatable read; the store needs read committed/),
      0,
    ]);
  });

  it('a database whose default_transaction_isolation is serializable is refused with the default runner too', async () => {
    const url = new URL(postgres.server.url);
    url.searchParams.set('options', '-c default_transaction_isolation=serializable');
    const serializable = postgres.server.pool({ connectionString: url.toString() });
    const { store } = await setup(serializable);
    const refused = store.runInTransaction(randomUUID(), { doneTtlMs: 1000 }, async () => undefined);
    await expect(refused).rejects.toThrow(/isolation level serializable/);
  });
});

describe('the sweep timer', () => {
  it('starts no sweep while the previous one still runs', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let sweepStatements = 0;
    const counting = Object.create(postgres.pool, {
      query: {
        value: (...args: Parameters<pg.Pool['query']>) => {
          if (String(args[0]).includes('SKIP LOCKED')) sweepStatements++;
          return (postgres.pool.query as (...a: unknown[]) => unknown)(...args);
        },
      },
    }) as pg.Pool;
    const { store } = await setup(counting, { sweepIntervalMs: 1000, operationTimeoutMs: 600_000 });
    const lock = await holding(`LOCK TABLE ${store.table} IN ACCESS EXCLUSIVE MODE`);
    vi.advanceTimersByTime(1000);
    expect(sweepStatements).toBe(1); // waits for the lock
    vi.advanceTimersByTime(3000);
    expect(sweepStatements).toBe(1);
    await lock.release();
    await expect
      .poll(() => {
        vi.advanceTimersByTime(1000);
        return sweepStatements;
      })
      .toBe(2);
  });
});
