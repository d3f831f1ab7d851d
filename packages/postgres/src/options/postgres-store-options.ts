import { checkBoolean, checkFunction, checkMs, MAX_TIMER_MS, readOption } from '@jobhook/core/internal';
import type { PoolClient } from 'pg';
import type { TransactionRunner } from '../sql-executor.js';
import { checkConnection, type PostgresConnection } from './connection-option.js';
import { tableName, type TableName } from './table-name.js';

export type { PostgresConnection } from './connection-option.js';

/** Default of {@link PostgresStoreOptions.sweepIntervalMs}: 10 minutes. */
export const DEFAULT_SWEEP_INTERVAL_MS = 600_000;
/** Default of {@link PostgresStoreOptions.operationTimeoutMs}. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 2000;
/** Default of the `limit` of `PostgresStoreMethods.sweep`: rows deleted per statement. */
export const DEFAULT_SWEEP_BATCH = 1000;

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

/** {@link PostgresStoreOptions} and the connection checked, with defaults. @internal */
export interface ResolvedPostgresStoreOptions<Db> {
  connection: PostgresConnection;
  table: TableName;
  operationTimeoutMs: number;
  /** Ms between two sweeps, or `false`: never. */
  sweepIntervalMs: number | false;
  transaction: TransactionRunner<Db> | undefined;
  transactional: boolean;
}

const WHERE = 'createPostgresStore';

/**
 * Checks the connection and every option of `createPostgresStore`, and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolvePostgresStoreOptions<Db>(
  connection: PostgresConnection,
  options: PostgresStoreOptions<Db> = {},
): ResolvedPostgresStoreOptions<Db> {
  const table = tableName(WHERE, readOption(WHERE, options, 'table'), options.schema);
  const operationTimeoutMs = checkMs(
    WHERE,
    'operationTimeoutMs',
    readOption(WHERE, options, 'operationTimeoutMs') ?? DEFAULT_OPERATION_TIMEOUT_MS,
    { max: MAX_TIMER_MS },
  );
  const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  if (sweepIntervalMs !== false) checkMs(WHERE, 'sweepIntervalMs', sweepIntervalMs, { max: MAX_TIMER_MS });
  if (options.transactional !== undefined) checkBoolean(WHERE, 'transactional', options.transactional);
  if (options.transaction !== undefined) checkFunction(WHERE, 'transaction', options.transaction, 'a function (a TransactionRunner)');
  return {
    connection: checkConnection(WHERE, connection),
    table,
    operationTimeoutMs,
    sweepIntervalMs,
    transaction: options.transaction,
    transactional: options.transactional !== false,
  };
}
