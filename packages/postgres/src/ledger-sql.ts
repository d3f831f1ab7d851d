import type { TableName } from './options/table-name.js';

/** The version `migrate()` writes as the ledger table's comment. */
export const LEDGER_SCHEMA_VERSION = 1;

/**
 * The ledger's statements, for one table: one row per submission key, `job_id` set once attached,
 * `due_at` the next poll (its lease's end while leased), `token` the lease. Times are ms since the
 * epoch on the callers' clock (bigint).
 */
export interface LedgerSql {
  migrate: string[];
  /** `[key, createdAt, dueAt]`. */
  begin: string;
  /** `[key, jobId, now, dueAt or null]`. */
  attach: string;
  /** `[key]` → one row when removed. */
  discard: string;
  /** `[jobId]` → one row per removed entry. */
  settle: string;
  /** `[now, limit, leaseMs, token]` → `{ key, job_id, created_at, attempts, old_due }`. */
  lease: string;
  /** `[key, token, dueAt]` → one row when rescheduled. */
  reschedule: string;
  /** `[key, token]` → one row when removed. */
  abandon: string;
  /** `[]` → `{ entries, attached }`. */
  count: string;
}

/** The statements for `table`. */
export function ledgerSql(table: TableName, baseName: string): LedgerSql {
  const t = table.sql;
  const index = (suffix: string): string => `"${`${baseName}_${suffix}`.slice(0, 63)}"`;
  return {
    migrate: [
      ...(table.schemaSql === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS ${table.schemaSql}`]),
      `CREATE TABLE IF NOT EXISTS ${t} (
        key text PRIMARY KEY,
        job_id text,
        created_at bigint NOT NULL,
        due_at bigint NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        token text
      )`,
      `CREATE INDEX IF NOT EXISTS ${index('due_at')} ON ${t} (due_at)`,
      `CREATE INDEX IF NOT EXISTS ${index('job_id')} ON ${t} (job_id)`,
      `COMMENT ON TABLE ${t} IS 'jobhook expected-jobs ledger, schema v${LEDGER_SCHEMA_VERSION}'`,
    ],
    begin: `INSERT INTO ${t} (key, created_at, due_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
    attach: `INSERT INTO ${t} AS l (key, job_id, created_at, due_at) VALUES ($1, $2, $3, COALESCE($4::bigint, $3::bigint))
      ON CONFLICT (key) DO UPDATE SET job_id = EXCLUDED.job_id, due_at = COALESCE($4::bigint, l.due_at)`,
    discard: `DELETE FROM ${t} WHERE key = $1 RETURNING 1 AS ok`,
    settle: `DELETE FROM ${t} WHERE job_id = $1 RETURNING 1 AS ok`,
    // SKIP LOCKED: instances leasing at the same time each take other rows, never waiting on each other.
    lease: `WITH due AS (
        SELECT key, due_at AS old_due FROM ${t} WHERE due_at <= $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED
      )
      UPDATE ${t} AS l SET due_at = $1::bigint + $3::bigint, token = $4 FROM due WHERE l.key = due.key
      RETURNING l.key, l.job_id, l.created_at, l.attempts, due.old_due`,
    reschedule: `UPDATE ${t} SET token = NULL, due_at = $3, attempts = attempts + 1 WHERE key = $1 AND token = $2 RETURNING 1 AS ok`,
    abandon: `DELETE FROM ${t} WHERE key = $1 AND token = $2 RETURNING 1 AS ok`,
    count: `SELECT count(*)::int AS entries, count(job_id)::int AS attached FROM ${t}`,
  };
}
