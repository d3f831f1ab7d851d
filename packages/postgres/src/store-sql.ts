import { createHash } from 'node:crypto';
import type { TableName } from './options/table-name.js';

/** The version `migrate()` writes as the table's comment; a later schema change reads it to migrate. */
export const SCHEMA_VERSION = 1;

/**
 * The statements of the store, for one table. One row per job id: `token` set while claimed (a
 * lease of `claim()`), `done` once handled; `expires_at` ends either (the lease, or how long the
 * done mark is kept). A row whose `expires_at` passed counts as absent: expiry never depends on the
 * sweep, which only deletes such rows to keep the table small. Times are the server's
 * (`clock_timestamp()`), so receivers on hosts with different clocks agree.
 *
 * A recipient tag nonce's binding is a row of the same table keyed `tag:<nonce>`, its job id in
 * `token` (the service's job ids are UUIDs: none has that form): no table to migrate, and the sweep
 * deletes it once expired like any row.
 */
export interface StoreSql {
  /** DDL, run in one transaction by `migrate()` (serialized by an advisory lock). */
  migrate: string[];
  /** `[lockKey]` → migrate's advisory lock. */
  migrateLock: string;
  /** `[jobId, token, leaseMs]` → `{ claimed, found, done, live, ms_left }`. */
  claim: string;
  /** `[jobId, token, ttlMs]` → one row when the token held a live claim (now done). */
  complete: string;
  /** `[jobId, token]` → one row when the token held a live claim (now deleted). */
  release: string;
  /** `[jobId, token, leaseMs]` → one row when the token held a live claim (lease now leaseMs from now). */
  extend: string;
  /** `[key, jobId, ttlMs]` → `{ bound, found, live, bound_to }`: binds a tag nonce's row to a job when it is absent or expired. */
  bindNonce: string;
  /** `[lockKey]` → `{ locked, isolation }`: the transaction's try-lock on a job, and its isolation level. */
  tryLock: string;
  /** `[jobId]` → `{ done, claimed, live, ms_left }`, or no row. */
  read: string;
  /** `[jobId, ttlMs]`: writes the done mark. */
  markDone: string;
  /**
   * Without parameters, for one simple-protocol round trip: `BEGIN`, then {@link tryLock} and
   * {@link read} as two statements (three results).
   */
  openBatch(lockKey: string, jobId: string): string;
  /** Without parameters: {@link markDone}, then `COMMIT` (two results). */
  finishBatch(jobId: string, ttlMs: number): string;
  /**
   * The same two batches on server-side prepared statements (no parse or plan per job): `prepare`
   * creates them on a connection (names unique to the table and the statements' text).
   */
  prepared: {
    prepare: string;
    openBatch(lockKey: string, jobId: string): string;
    finishBatch(jobId: string, ttlMs: number): string;
  };
  /** `[limit]` → `{ deleted }`: deletes up to `limit` expired rows, skipping rows a transaction holds. */
  sweep: string;
}

const NOW = 'clock_timestamp()';
/** `$n` milliseconds from now. */
const fromNow = (param: string): string => `${NOW} + ${param}::float8 * interval '1 millisecond'`;
/** Milliseconds until `expires_at`, at least 1, as a JS number. */
const MS_LEFT = `greatest(1, ceil(extract(epoch from (j.expires_at - ${NOW})) * 1000))::float8 AS ms_left`;

/**
 * `value` as an SQL text expression for a statement sent without parameters, spelt in hex digits
 * only: no quote or backslash for anything to end the literal with, whatever the session's
 * `standard_conforming_strings` or `client_encoding` (pg writes UTF-8; a session set to SJIS or BIG5
 * reads a UTF-8 continuation byte as the first of a two-byte character, which swallows the next
 * byte: one of the backslashes an escaped literal doubles). The server decodes the same UTF-8 bytes
 * pg sends for a parameter. `COLLATE "default"`: `convert_from`'s result takes the "C" collation of
 * its `name` argument, and the primary key's index, in the column's collation, would not serve a
 * comparison in another one.
 */
function textLiteral(value: string): string {
  return `convert_from(decode('${Buffer.from(value, 'utf8').toString('hex')}', 'hex'), 'UTF8') COLLATE "default"`;
}

/** A whole number, checked again where it is written into SQL text. */
function integerLiteral(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError(`expected a whole number, got ${String(value)}`);
  return String(value);
}

/** The statements for `table`. */
export function storeSql(table: TableName): StoreSql {
  const t = table.sql;
  const tryLock = (key: string): string =>
    `SELECT pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) AS locked, current_setting('transaction_isolation') AS isolation`;
  const read = (jobId: string): string =>
    `SELECT j.done, j.token IS NOT NULL AS claimed, j.expires_at > ${NOW} AS live, ${MS_LEFT} FROM ${t} AS j WHERE j.job_id = ${jobId}`;
  const markDone = (jobId: string, ttlMs: string): string =>
    `INSERT INTO ${t} (job_id, token, done, expires_at) VALUES (${jobId}, NULL, true, ${fromNow(ttlMs)})
      ON CONFLICT (job_id) DO UPDATE SET token = NULL, done = true, expires_at = EXCLUDED.expires_at`;
  // The same name means the same table and statements, on any connection of any process.
  const id = createHash('sha256')
    .update(`${t}\n${tryLock('$1')}\n${read('$1')}\n${markDone('$1', '$2')}`)
    .digest('hex')
    .slice(0, 16);
  const [lockName, readName, markName] = ['lock', 'read', 'mark'].map((step) => `jobhook_${id}_${step}`);
  return {
    migrate: [
      ...(table.schemaSql === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS ${table.schemaSql}`]),
      `CREATE TABLE IF NOT EXISTS ${t} (
        job_id text PRIMARY KEY,
        token text,
        done boolean NOT NULL DEFAULT false,
        expires_at timestamptz NOT NULL
      )`,
      `CREATE INDEX IF NOT EXISTS ${table.indexSql} ON ${t} (expires_at)`,
      `COMMENT ON TABLE ${t} IS 'jobhook idempotency store, schema v${SCHEMA_VERSION}'`,
    ],
    migrateLock: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
    // The upsert takes the row only when it is absent or expired. The outer SELECT reads the row as
    // the statement's snapshot saw it: when the upsert lost to a claim committed after that
    // snapshot, it shows no row or an expired one, and the caller asks again.
    claim: `WITH taken AS (
        INSERT INTO ${t} AS j (job_id, token, done, expires_at) VALUES ($1, $2, false, ${fromNow('$3')})
        ON CONFLICT (job_id) DO UPDATE SET token = EXCLUDED.token, done = false, expires_at = EXCLUDED.expires_at
        WHERE j.expires_at <= ${NOW}
        RETURNING 1
      )
      SELECT EXISTS (SELECT 1 FROM taken) AS claimed, j.job_id IS NOT NULL AS found, j.done,
        j.expires_at > ${NOW} AS live, ${MS_LEFT}
      FROM (SELECT 1) AS one LEFT JOIN ${t} AS j ON j.job_id = $1`,
    complete: `UPDATE ${t} SET token = NULL, done = true, expires_at = ${fromNow('$3')}
      WHERE job_id = $1 AND token = $2 AND NOT done AND expires_at > ${NOW} RETURNING 1 AS ok`,
    release: `DELETE FROM ${t} WHERE job_id = $1 AND token = $2 AND NOT done AND expires_at > ${NOW} RETURNING 1 AS ok`,
    extend: `UPDATE ${t} SET expires_at = ${fromNow('$3')}
      WHERE job_id = $1 AND token = $2 AND NOT done AND expires_at > ${NOW} RETURNING 1 AS ok`,
    // As claim: when the upsert lost to a binding committed after the snapshot, the caller asks again.
    // Committed without waiting for its WAL flush (synchronous_commit off for this statement's own
    // transaction only): the flush doubled a job's time on a durable server. A server crash may lose
    // the bindings of its last few hundred ms (three wal_writer_delay), as a Redis restart loses its
    // unsaved keys: a tag copied in that window passes once more.
    bindNonce: `WITH async AS (SELECT set_config('synchronous_commit', 'off', true)), taken AS (
        INSERT INTO ${t} AS j (job_id, token, done, expires_at) SELECT $1, $2, false, ${fromNow('$3')} FROM async
        ON CONFLICT (job_id) DO UPDATE SET token = EXCLUDED.token, done = false, expires_at = EXCLUDED.expires_at
        WHERE j.expires_at <= ${NOW}
        RETURNING 1
      )
      SELECT EXISTS (SELECT 1 FROM taken) AS bound, j.job_id IS NOT NULL AS found, j.expires_at > ${NOW} AS live, j.token AS bound_to
      FROM (SELECT 1) AS one LEFT JOIN ${t} AS j ON j.job_id = $1`,
    tryLock: tryLock('$1'),
    read: read('$1'),
    markDone: markDone('$1', '$2'),
    // The read stays a statement of its own after the lock's: see JobStatements.open (job-transaction.ts).
    openBatch: (lockKey, jobId) => `BEGIN; ${tryLock(textLiteral(lockKey))}; ${read(textLiteral(jobId))}`,
    finishBatch: (jobId, ttlMs) => `${markDone(textLiteral(jobId), integerLiteral(ttlMs))}; COMMIT`,
    prepared: {
      prepare: `PREPARE ${lockName}(text) AS ${tryLock('$1')}; PREPARE ${readName}(text) AS ${read('$1')}; PREPARE ${markName}(text, float8) AS ${markDone('$1', '$2')}`,
      openBatch: (lockKey, jobId) => `BEGIN; EXECUTE ${lockName}(${textLiteral(lockKey)}); EXECUTE ${readName}(${textLiteral(jobId)})`,
      finishBatch: (jobId, ttlMs) => `EXECUTE ${markName}(${textLiteral(jobId)}, ${integerLiteral(ttlMs)}); COMMIT`,
    },
    sweep: `WITH expired AS (
        SELECT job_id FROM ${t} WHERE expires_at <= ${NOW} LIMIT $1 FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM ${t} AS j USING expired WHERE j.job_id = expired.job_id AND j.expires_at <= ${NOW} RETURNING 1
      )
      SELECT count(*)::int AS deleted FROM gone`,
  };
}
