import type { Clock } from '@jobhook/core';
import { checkMs, describeValue, ledgerClock, MAX_TIMER_MS, optionError, readOption } from '@jobhook/core/internal';
import type { SqlExecutor } from '../sql-executor.js';
import { checkConnection, type PostgresConnection } from './connection-option.js';
import { DEFAULT_OPERATION_TIMEOUT_MS } from './postgres-store-options.js';
import { tableName, type TableName } from './table-name.js';

/** Default of {@link PostgresLedgerOptions.table}. */
export const DEFAULT_LEDGER_TABLE = 'jobhook_ledger';

/** Options of `createPostgresLedger`. */
export interface PostgresLedgerOptions {
  /** The ledger's table. Default `'jobhook_ledger'`. Created by `migrate()`. */
  table?: string;
  /** Its schema; default the connection's `search_path`. */
  schema?: string;
  /** Longest wait for one statement, ms; past it the call rejects with `ERR_STORE_UNAVAILABLE`. Default 2000. */
  operationTimeoutMs?: number;
  /** Where time comes from: `now()` in ms since the epoch. Default `Date`. */
  clock?: Clock;
}

/** Where a write of the ledger runs: `executor`, a statement runner of your open transaction, joins it. */
export interface LedgerWriteOptions {
  /**
   * Runs the statement in your transaction (`pgExecutor(client)`, or any {@link SqlExecutor}), so
   * the entry commits (or rolls back) with your own writes; the ledger's timeout does not apply.
   * Default: a statement of its own on the pool.
   */
  executor?: SqlExecutor;
}

/** {@link PostgresLedgerOptions} and the connection checked, with defaults. @internal */
export interface ResolvedPostgresLedgerOptions {
  connection: PostgresConnection;
  table: TableName;
  /** The table's name without its schema: the ledger's index names start with it. */
  baseName: string;
  operationTimeoutMs: number;
  /** Now, in ms since the epoch, from `clock`. */
  now: () => number;
}

const WHERE = 'createPostgresLedger';

/**
 * Checks the connection and every option of `createPostgresLedger`, and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolvePostgresLedgerOptions(
  connection: PostgresConnection,
  options: PostgresLedgerOptions = {},
): ResolvedPostgresLedgerOptions {
  const baseName = (readOption(WHERE, options, 'table') as string | undefined) ?? DEFAULT_LEDGER_TABLE;
  const table = tableName(WHERE, baseName, options.schema);
  const operationTimeoutMs = checkMs(
    WHERE,
    'operationTimeoutMs',
    readOption(WHERE, options, 'operationTimeoutMs') ?? DEFAULT_OPERATION_TIMEOUT_MS,
    { max: MAX_TIMER_MS },
  );
  const now = ledgerClock(WHERE, options.clock);
  return { connection: checkConnection(WHERE, connection), table, baseName, operationTimeoutMs, now };
}

/**
 * The `executor` of a ledger write (`postgresLedger.begin`, ...), checked; `undefined` when not given.
 * @throws JobhookError `ERR_OPTION_INVALID` when it has no `executeSql`.
 * @internal
 */
export function checkExecutor(where: string, executor: unknown): SqlExecutor | undefined {
  if (executor !== undefined && typeof (executor as Partial<SqlExecutor> | null)?.executeSql !== 'function') {
    throw optionError(where, `executor must have executeSql(text, values) (pgExecutor(client)), got ${describeValue(executor)}`);
  }
  return executor as SqlExecutor | undefined;
}
