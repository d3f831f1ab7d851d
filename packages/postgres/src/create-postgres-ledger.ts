import { randomUUID } from 'node:crypto';
import type { Clock } from '@jobhook/core';
import { checkMs, describeValue, ledgerArgs, ledgerClock, MAX_TIMER_MS, optionError, readOption } from '@jobhook/core/internal';
import type { JobLedger, LeasedEntry, LedgerCounts } from '@jobhook/core/ledger';
import { ledgerSql } from './ledger-sql.js';
import { DEFAULT_OPERATION_TIMEOUT_MS, type PostgresConnection } from './postgres-store-options.js';
import { poolTransaction } from './pool-transaction.js';
import { resolvePool } from './resolve-pool.js';
import { pgExecutor, type SqlExecutor } from './sql-executor.js';
import { unavailable, withTimeout, type LedgerOperation } from './store-errors.js';
import { tableName } from './table-name.js';

/** Default of {@link PostgresLedgerOptions.table}. */
export const DEFAULT_LEDGER_TABLE = 'jobhook_ledger';

/** Options of {@link createPostgresLedger}. */
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

/** The PostgreSQL ledger: the {@link JobLedger} contract, writes that can join your transaction, and `migrate()`. */
export interface PostgresLedger extends JobLedger {
  begin(key: string, options: { dueAt: number } & LedgerWriteOptions): Promise<void>;
  attach(key: string, jobId: string, options?: { dueAt?: number } & LedgerWriteOptions): Promise<void>;
  discard(key: string, options?: LedgerWriteOptions): Promise<boolean>;
  settle(jobId: string, options?: LedgerWriteOptions): Promise<boolean>;
  /** Creates the schema (when named), the table and its indexes if missing. Idempotent; instances may call it together. */
  migrate(): Promise<void>;
  /** The table, as `schema.table` or `table`. */
  readonly table: string;
}

const WHERE = 'createPostgresLedger';

/**
 * Creates the expected-jobs ledger on PostgreSQL (call `migrate()` once). Its writes can join your
 * own transaction (`{ executor: pgExecutor(client) }`): write the entry in the transaction that
 * records the order the job is for, pg-boss style. `lease` takes due rows with `FOR UPDATE SKIP
 * LOCKED`, so instances leasing at once each get other rows: one poller per job.
 *
 * @example
 * ```ts
 * const ledger = createPostgresLedger({ pool });
 * await ledger.migrate();
 * const client = createClient({ baseUrl, apiKey, ledger });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when an option is wrong. Methods reject with
 * `ERR_OPTION_INVALID` on a bad argument and `ERR_STORE_UNAVAILABLE` when PostgreSQL fails or does not answer in time.
 */
export function createPostgresLedger(connection: PostgresConnection, options: PostgresLedgerOptions = {}): PostgresLedger {
  const baseName = (readOption(WHERE, options, 'table') as string | undefined) ?? DEFAULT_LEDGER_TABLE;
  const table = tableName(WHERE, baseName, options.schema);
  const timeoutMs = checkMs(WHERE, 'operationTimeoutMs', readOption(WHERE, options, 'operationTimeoutMs') ?? DEFAULT_OPERATION_TIMEOUT_MS, {
    max: MAX_TIMER_MS,
  });
  const now = ledgerClock(WHERE, options.clock);
  const { pool, owned } = resolvePool(connection, timeoutMs, WHERE);
  const sql = ledgerSql(table, baseName);
  const direct = pgExecutor(pool);
  let closing: Promise<void> | undefined;

  async function query(operation: LedgerOperation, text: string, values: unknown[], executor?: SqlExecutor) {
    if (closing !== undefined) throw unavailable(operation, new Error('the ledger is closed'));
    if (executor !== undefined) {
      try {
        return (await executor.executeSql(text, values)).rows;
      } catch (err) {
        throw unavailable(operation, err);
      }
    }
    return (await withTimeout(direct.executeSql(text, values), timeoutMs, operation)).rows;
  }
  const executorOf = (o: LedgerWriteOptions | undefined, where: string): SqlExecutor | undefined => {
    const executor = o?.executor;
    if (executor !== undefined && typeof executor?.executeSql !== 'function') {
      throw optionError(where, `executor must have executeSql(text, values) (pgExecutor(client)), got ${describeValue(executor)}`);
    }
    return executor;
  };

  const args = ledgerArgs('postgresLedger');
  return Object.freeze({
    table: table.plain,
    async migrate() {
      if (closing !== undefined) throw unavailable('migrate ledger', new Error('the ledger is closed'));
      await poolTransaction(
        pool,
        timeoutMs,
      )(async (_client, tx) => {
        await tx.executeSql('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`jobhook:migrate:${table.plain}`]);
        for (const statement of sql.migrate) await tx.executeSql(statement, []);
      }).catch((err: unknown) => {
        throw unavailable('migrate ledger', err);
      });
    },
    async begin(key, o) {
      const dueAt = args.begin(key, o);
      await query('begin', sql.begin, [key, now(), dueAt], executorOf(o, 'postgresLedger.begin'));
    },
    async attach(key, jobId, o = {}) {
      const dueAt = args.attach(key, jobId, o) ?? null;
      await query('attach', sql.attach, [key, jobId.toLowerCase(), now(), dueAt], executorOf(o, 'postgresLedger.attach'));
    },
    async discard(key, o) {
      args.discard(key);
      return (await query('discard', sql.discard, [key], executorOf(o, 'postgresLedger.discard'))).length > 0;
    },
    async settle(jobId, o) {
      args.settle(jobId);
      return (await query('settle', sql.settle, [jobId.toLowerCase()], executorOf(o, 'postgresLedger.settle'))).length > 0;
    },
    async lease(leaseOptions: { limit: number; leaseMs: number }): Promise<LeasedEntry[]> {
      const { limit, leaseMs } = args.lease(leaseOptions);
      const at = now();
      const token = randomUUID();
      const rows = await query('lease', sql.lease, [at, limit, leaseMs, token]);
      return rows
        .map((r) => ({
          key: String(r['key']),
          jobId: r['job_id'] === null ? null : String(r['job_id']),
          createdAt: Number(r['created_at']),
          dueAt: at + leaseMs,
          attempts: Number(r['attempts']),
          token,
          oldDue: Number(r['old_due']),
        }))
        .sort((a, b) => a.oldDue - b.oldDue)
        .map(({ oldDue: _oldDue, ...entry }) => entry);
    },
    async reschedule(key, token, o) {
      const dueAt = args.reschedule(key, token, o);
      return (await query('reschedule', sql.reschedule, [key, token, dueAt])).length > 0;
    },
    async abandon(key, token) {
      args.abandon(key, token);
      return (await query('abandon', sql.abandon, [key, token])).length > 0;
    },
    async count(): Promise<LedgerCounts> {
      const [row] = await query('count', sql.count, []);
      const entries = Number(row?.['entries'] ?? 0);
      const attached = Number(row?.['attached'] ?? 0);
      return { attached, unattached: entries - attached };
    },
    close() {
      closing ??= owned ? pool.end() : Promise.resolve();
      return closing;
    },
  } satisfies PostgresLedger);
}
