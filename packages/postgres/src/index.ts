/**
 * `@jobhook/postgres`: the PostgreSQL idempotency store and expected-jobs ledger. In transactional mode the receiver runs
 * each handler inside the store's transaction (`ctx.db`), and the job's done mark commits with the
 * handler's writes: exactly-once effects across crashes.
 * @packageDocumentation
 */
export { createPostgresStore } from './create-postgres-store.js';
export { TRANSACTION_RETRY_AFTER_MS } from './job-transaction.js';
export {
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_SWEEP_BATCH,
  DEFAULT_SWEEP_INTERVAL_MS,
  type PostgresConnection,
  type PostgresStoreOptions,
} from './options/postgres-store-options.js';
export type { PostgresLeaseStore, PostgresStore, PostgresStoreMethods } from './postgres-store.js';
export { pgExecutor, type SqlExecutor, type TransactionRunner } from './sql-executor.js';
export { DEFAULT_TABLE } from './options/table-name.js';
export { SCHEMA_VERSION } from './store-sql.js';
export {
  createPostgresLedger,
  DEFAULT_LEDGER_TABLE,
  type LedgerWriteOptions,
  type PostgresLedger,
  type PostgresLedgerOptions,
} from './create-postgres-ledger.js';
export { LEDGER_SCHEMA_VERSION } from './ledger-sql.js';
