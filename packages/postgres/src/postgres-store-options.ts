import type { IdempotencyStore, TagNonceStore, TransactionalStore } from '@jobhook/core';
import type { Pool, PoolClient } from 'pg';
import type { TransactionRunner } from './sql-executor.js';

/** Default of {@link PostgresStoreOptions.sweepIntervalMs}: 10 minutes. */
export const DEFAULT_SWEEP_INTERVAL_MS = 600_000;
/** Default of {@link PostgresStoreOptions.operationTimeoutMs}. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 2000;
/** Default of the `limit` of {@link PostgresStoreMethods.sweep}: rows deleted per statement. */
export const DEFAULT_SWEEP_BATCH = 1000;

/**
 * Where the store's database is: your pg `Pool` (it stays yours: the store never ends it), or a
 * connection string (the store makes its own pool and ends it on `close()`).
 */
export type PostgresConnection = { pool: Pool } | { connectionString: string };

/** Options of `createPostgresStore`. */
export interface PostgresStoreOptions<Db = PoolClient> {
  /** The table of the done marks and claims. Default `'jobhook_jobs'`. Created by `migrate()`. */
  table?: string;
  /** Its schema; default: the connection's `search_path`. `migrate()` creates it when missing. */
  schema?: string;
  /**
   * Every so often the store deletes expired rows (`sweep()`), on a timer that does not keep the
   * process alive. `false`: never (call `sweep()` yourself, e.g. from a cron job). Default 600,000.
   * Expired rows count as absent either way; the sweep only keeps the table small.
   */
  sweepIntervalMs?: number | false;
  /**
   * Longest wait for one `claim`, `complete`, `release`, `extend`, `bindTagNonce` or `sweep` statement; past it the
   * call rejects with `ERR_STORE_UNAVAILABLE`. In a transaction, the longest wait for each of the
   * store's parts: a connection of the pool, lock and read (the handler then never starts), and the
   * done mark with `COMMIT`; the handler itself is bounded by the receiver's `handlerTimeoutMs`. Also
   * the connect timeout of a pool the store makes. Default 2000.
   */
  operationTimeoutMs?: number;
  /**
   * Runs each job in a transaction of your database library instead of a pg client of the pool:
   * see {@link TransactionRunner}. Handlers then get that library's transaction as `ctx.db`.
   */
  transaction?: TransactionRunner<Db>;
  /**
   * `false`: no transactional mode (the store has no `runInTransaction`, so the receiver claims,
   * runs the handler outside any transaction with a renewed lease, and completes), for handlers whose
   * effects are not in this database. Default `true`.
   */
  transactional?: boolean;
}

/** What the PostgreSQL store adds to the idempotency contract. */
export interface PostgresStoreMethods {
  /**
   * Creates the schema (when named), the table and its index if missing, in one transaction
   * serialized by an advisory lock, so instances starting together may all call it. Idempotent.
   */
  migrate(): Promise<void>;
  /**
   * Deletes expired rows (spent leases, done marks older than their TTL), `limit` per statement
   * (default 1000) until none is left, skipping rows a running transaction holds; resolves with how
   * many were deleted.
   */
  sweep(options?: { limit?: number }): Promise<number>;
  /** The table, as `schema.table` or `table`. */
  readonly table: string;
}

/** A PostgreSQL store in transactional mode: handlers get `ctx.db` (a pg `PoolClient` by default). */
export interface PostgresStore<Db = PoolClient> extends TransactionalStore<Db>, TagNonceStore, PostgresStoreMethods {}

/** A PostgreSQL store made with `transactional: false`: claims with leases and fencing only. */
export interface PostgresLeaseStore extends IdempotencyStore, TagNonceStore, PostgresStoreMethods {}
