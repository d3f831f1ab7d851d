import type { TransactionResult } from '@jobhook/core';
import type { SqlExecutor, TransactionRunner } from './sql-executor.js';
import { abortedByWork, unavailable } from './store-errors.js';
import type { StoreSql } from './store-sql.js';

/**
 * `retryAfterMs` of a job whose transaction another receiver holds. A transaction has no known end,
 * and it is held by a live handler (a dead receiver's is rolled back at once): 30 s, the spec's
 * longest backoff, so the receiver's default `Retry-After` (30) stands and a sender with few
 * retries does not spend them on a long handler.
 */
export const TRANSACTION_RETRY_AFTER_MS = 30_000;

/** The only isolation level under which a statement after the lock sees the lock holder's commit. */
const READ_COMMITTED = 'read committed';

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
  /** Longest wait for the store's parts: up to the handler, and from its end to the commit. */
  timeoutMs: number;
}

/**
 * `runInTransaction` of the store: in one transaction of `runner`, try-locks the job (never waits),
 * answers `done` or `in-flight` from its row, else runs `work(db)` and writes the done mark before
 * the runner commits. `work` rejecting rolls everything back (`rolled-back`, with its error), as does
 * a transaction the handler's statements aborted (SQLSTATE 25P02, 40001, 40P01 at the done mark or
 * the commit). Any other failure (connect, lock, done mark, `COMMIT`) rejects with
 * `ERR_STORE_UNAVAILABLE`: nothing of the handler's work was kept, or (a commit that answered after
 * `timeoutMs`) it was kept with the done mark, and the retry is answered duplicate.
 *
 * The store's parts are bounded by `timeoutMs` each: connecting, locking and reading (the handler
 * does not start after it: the transaction rolls back), and the done mark with the commit. The
 * handler's part is not: the receiver's `handlerTimeoutMs` answers for it.
 */
export async function runJobTransaction<Db>(
  context: JobTransactionContext<Db>,
  jobId: string,
  doneTtlMs: number,
  work: (db: Db) => Promise<void>,
): Promise<TransactionResult> {
  const { sql, runner, lockKey, timeoutMs } = context;
  const failed: { threw: boolean; error?: unknown } = { threw: false };
  const bound = phaseBound(timeoutMs, jobId);
  const body = async (db: Db, tx: SqlExecutor): Promise<TransactionResult> => {
    bound.check();
    const [lock] = (await tx.executeSql(sql.tryLock, [lockKey(jobId)])).rows;
    checkIsolation(lock?.['isolation']);
    if (lock?.['locked'] !== true) return { state: 'in-flight', retryAfterMs: TRANSACTION_RETRY_AFTER_MS };
    // A statement after the lock's: under READ COMMITTED its snapshot includes the done mark of the
    // transaction that held the lock (checked above: another level would have taken the snapshot
    // at the transaction's first statement, before the lock).
    const [row] = (await tx.executeSql(sql.read, [jobId])).rows as unknown as JobRow[];
    if (row?.live === true) {
      if (row.done === true) return { state: 'done' };
      if (row.claimed === true) return { state: 'in-flight', retryAfterMs: row.ms_left ?? 1 };
    }
    bound.check();
    bound.pause();
    try {
      await work(db);
    } catch (error) {
      failed.threw = true;
      failed.error = error;
      throw error;
    }
    bound.start('the done mark and COMMIT');
    await tx.executeSql(sql.markDone, [jobId, doneTtlMs]);
    return { state: 'committed' };
  };
  bound.start('the connection, lock and read');
  const running = runner(body).catch((err: unknown): TransactionResult => {
    if (failed.threw) return { state: 'rolled-back', error: failed.error };
    const aborted = abortedByWork(err);
    if (aborted !== undefined) return { state: 'rolled-back', error: aborted };
    throw unavailable('transaction', err, jobId);
  });
  try {
    return await Promise.race([running, bound.expired]);
  } finally {
    bound.pause();
  }
}

/** Refuses a transaction whose isolation level is not READ COMMITTED (see the read above). */
function checkIsolation(isolation: unknown): void {
  // PostgreSQL runs READ UNCOMMITTED as READ COMMITTED.
  if (isolation === READ_COMMITTED || isolation === 'read uncommitted') return;
  throw new Error(
    `the job's transaction runs at isolation level ${String(isolation)}; the store needs ${READ_COMMITTED} ` +
      '(its snapshot would predate the job lock, so a job could run twice): open it with READ COMMITTED, ' +
      'or set default_transaction_isolation so',
  );
}

/** A timer of the store's parts of one transaction: `expired` rejects when a part outlasts `timeoutMs`. */
function phaseBound(timeoutMs: number, jobId: string) {
  let timer: NodeJS.Timeout | undefined;
  let expire!: (err: Error) => void;
  const state = {
    passed: false,
    expired: new Promise<never>((_resolve, reject) => {
      expire = reject;
    }),
    start(part: string): void {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.passed = true;
        expire(unavailable('transaction', new Error(`${part} took longer than ${timeoutMs} ms`), jobId));
      }, timeoutMs);
    },
    pause(): void {
      clearTimeout(timer);
    },
    /** Throws (rolling the transaction back) once the bound passed: the caller was answered already. */
    check(): void {
      if (state.passed) throw new Error(`the store gave up on job ${jobId} after ${timeoutMs} ms`);
    },
  };
  // The race in runJobTransaction may have settled already: a late expiry is nobody's failure.
  state.expired.catch(() => undefined);
  return state;
}
