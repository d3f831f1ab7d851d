import type { IdempotencyStore, TagNonceStore, TransactionalStore } from '@jobhook/core';
import type { PoolClient } from 'pg';

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
