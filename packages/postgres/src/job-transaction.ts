import type { TransactionResult } from '@jobhook/core';
import type { SqlExecutor, TransactionRunner } from './sql-executor.js';
import { unavailable } from './store-errors.js';
import type { StoreSql } from './store-sql.js';

/**
 * `retryAfterMs` of a job whose transaction another receiver holds: a transaction has no known end,
 * so this is a guess; the receiver answers its own `Retry-After` anyway.
 */
export const TRANSACTION_RETRY_AFTER_MS = 1000;

/** One row of the read statement. */
interface JobRow {
  done: boolean | null;
  claimed: boolean | null;
  live: boolean | null;
  ms_left: number | null;
}

/** What running a job in a transaction needs from the store. */
export interface JobTransactionContext<Db> {
  sql: StoreSql;
  runner: TransactionRunner<Db>;
  /** The advisory lock key of a job (table and job id). */
  lockKey: (jobId: string) => string;
}

/**
 * `runInTransaction` of the store: in one transaction of `runner`, try-locks the job (never waits),
 * answers `done` or `in-flight` from its row, else runs `work(db)` and writes the done mark before
 * the runner commits. `work` rejecting rolls everything back (`rolled-back`, with its error); any
 * other failure (connect, lock, done mark, `COMMIT`) rejects with `ERR_STORE_UNAVAILABLE`: nothing
 * of the handler's work was kept.
 */
export async function runJobTransaction<Db>(
  context: JobTransactionContext<Db>,
  jobId: string,
  doneTtlMs: number,
  work: (db: Db) => Promise<void>,
): Promise<TransactionResult> {
  const { sql, runner, lockKey } = context;
  const failed: { threw: boolean; error?: unknown } = { threw: false };
  const body = async (db: Db, tx: SqlExecutor): Promise<TransactionResult> => {
    const [lock] = (await tx.executeSql(sql.tryLock, [lockKey(jobId)])).rows;
    if (lock?.['locked'] !== true) return { state: 'in-flight', retryAfterMs: TRANSACTION_RETRY_AFTER_MS };
    // A statement after the lock's: its snapshot includes the done mark of the transaction that held it.
    const [row] = (await tx.executeSql(sql.read, [jobId])).rows as unknown as JobRow[];
    if (row?.live === true) {
      if (row.done === true) return { state: 'done' };
      if (row.claimed === true) return { state: 'in-flight', retryAfterMs: row.ms_left ?? 1 };
    }
    try {
      await work(db);
    } catch (error) {
      failed.threw = true;
      failed.error = error;
      throw error;
    }
    await tx.executeSql(sql.markDone, [jobId, doneTtlMs]);
    return { state: 'committed' };
  };
  try {
    return await runner(body);
  } catch (err) {
    if (failed.threw) return { state: 'rolled-back', error: failed.error };
    throw unavailable('transaction', err, jobId);
  }
}
