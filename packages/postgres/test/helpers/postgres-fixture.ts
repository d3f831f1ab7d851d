/**
 * The PostgreSQL a test file shares: one server and pool for the file, the stores a test made
 * closed after it, the server gone after the file; and a transaction runner of hand-driven pg
 * clients, the way an application without a query builder writes one.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { pgExecutor, type SqlExecutor, type TransactionRunner } from '../../src/index.js';
import { startPostgresServer, type PostgresServer } from './postgres-server.js';

/** The file's server and pool (set once its beforeAll ran) and the stores to close after each test. */
export interface PostgresFixture {
  readonly server: PostgresServer;
  readonly pool: pg.Pool;
  /** Closes `stores` after the current test. */
  track(...stores: Array<{ close(): Promise<void> }>): void;
}

/** Registers the file's hooks: the server and a pool of `poolOptions` before all, tracked stores closed after each test. */
export function usePostgres(poolOptions: pg.PoolConfig): PostgresFixture {
  let server: PostgresServer | undefined;
  let pool: pg.Pool | undefined;
  const stores: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = server.pool(poolOptions);
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await server?.dispose();
  });
  return {
    get server() {
      if (server === undefined) throw new Error('the PostgreSQL server is not started yet (use it inside a test or hook)');
      return server;
    },
    get pool() {
      if (pool === undefined) throw new Error('the PostgreSQL pool is not made yet (use it inside a test or hook)');
      return pool;
    },
    track: (...more) => void stores.push(...more),
  };
}

/**
 * A runner that opens its own transaction on a client of `pool`: `begin` (default `BEGIN`), the
 * body with `executor(client)` (default {@link pgExecutor}), COMMIT, or ROLLBACK when the body throws.
 */
export function handDrivenRunner(
  pool: pg.Pool,
  { begin = 'BEGIN', executor = pgExecutor }: { begin?: string; executor?: (client: pg.PoolClient) => SqlExecutor } = {},
): TransactionRunner<pg.PoolClient> {
  return async (body) => {
    const client = await pool.connect();
    try {
      await client.query(begin);
      const result = await body(client, executor(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  };
}
