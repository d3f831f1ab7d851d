import { randomUUID } from 'node:crypto';
import { ledgerArgs } from '@jobhook/core/internal';
import type { JobLedger, LeasedEntry, LedgerCounts } from '@jobhook/core/ledger';
import { ledgerSql } from './ledger-sql.js';
import { openPool } from './open-pool.js';
import type { PostgresConnection } from './options/connection-option.js';
import {
  checkExecutor,
  resolvePostgresLedgerOptions,
  type LedgerWriteOptions,
  type PostgresLedgerOptions,
} from './options/postgres-ledger-options.js';
import { poolTransaction } from './pool-transaction.js';
import { pgExecutor, type SqlExecutor } from './sql-executor.js';
import { unavailable, withTimeout, type LedgerOperation } from './store-errors.js';

export { DEFAULT_LEDGER_TABLE, type LedgerWriteOptions, type PostgresLedgerOptions } from './options/postgres-ledger-options.js';

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
  const o = resolvePostgresLedgerOptions(connection, options);
  const { table, baseName, operationTimeoutMs: timeoutMs, now } = o;
  const { pool, owned } = openPool(o.connection, timeoutMs);
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
  const executorOf = (writeOptions: LedgerWriteOptions | undefined, where: string): SqlExecutor | undefined =>
    checkExecutor(where, writeOptions?.executor);

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
