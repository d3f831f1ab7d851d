import type { TransactionResult } from '@jobhook/core';
import type { TransactionRunner } from './sql-executor.js';
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
export interface JobRow {
  done: boolean | null;
  claimed: boolean | null;
  live: boolean | null;
  ms_left: number | null;
}

/** What the store writes and locks for one job. */
export interface JobKeys {
  jobId: string;
  /** The advisory lock key of the job (table and job id). */
  lockKey: string;
  doneTtlMs: number;
}

/** What the try-lock and the read after it answered. */
export interface OpenedJob {
  locked: unknown;
  isolation: unknown;
  /** The job's row; undefined when there is none (or, with some runners, when the lock was not taken). */
  row: JobRow | undefined;
}

/** The store's statements in the open transaction of one job. */
export interface JobStatements {
  /**
   * Try-locks the job, then reads its row in a later statement. Under READ COMMITTED each statement
   * takes a new snapshot when it starts, so the read's includes the commit of the transaction that
   * held the lock before (PostgreSQL releases a transaction's locks only once its commit is visible).
   * One statement doing both would read with a snapshot taken before the lock was granted.
   */
  open(): Promise<OpenedJob>;
  /** Writes the done mark; the store's own runner sends its `COMMIT` in the same round trip. */
  markDone(): Promise<void>;
}

/**
 * Opens a transaction for one job, calls `body` with what handlers get as `ctx.db` and the store's
 * statements on that transaction, commits when `body` resolves (unless the done mark committed
 * already) and rolls back when it rejects (rejecting with its error).
 */
export type JobRunner<Db> = <T>(job: JobKeys, body: (db: Db, statements: JobStatements) => Promise<T>) => Promise<T>;

/**
 * A {@link JobRunner} over a {@link TransactionRunner} of any library: its `BEGIN` and `COMMIT`, and
 * the store's three parameterized statements through `executeSql` (the read only once the lock is taken).
 */
export function runnerJobs<Db>(runner: TransactionRunner<Db>, sql: StoreSql): JobRunner<Db> {
  return (job, body) =>
    runner((db, tx) =>
      body(db, {
        async open() {
          const [lock] = (await tx.executeSql(sql.tryLock, [job.lockKey])).rows;
          const opened: OpenedJob = { locked: lock?.['locked'], isolation: lock?.['isolation'], row: undefined };
          if (opened.locked !== true || !isReadCommitted(opened.isolation)) return opened;
          const [row] = (await tx.executeSql(sql.read, [job.jobId])).rows;
          return { ...opened, row: row as unknown as JobRow | undefined };
        },
        async markDone() {
          await tx.executeSql(sql.markDone, [job.jobId, job.doneTtlMs]);
        },
      }),
    );
}

/** What running a job in a transaction needs from the store. */
export interface JobTransactionContext<Db> {
  jobs: JobRunner<Db>;
  /** The advisory lock key of a job (table and job id). */
  lockKey: (jobId: string) => string;
  /** Longest wait for the store's parts: up to the handler, and from its end to the commit. */
  timeoutMs: number;
}

/**
 * `runInTransaction` of the store: in one transaction of `jobs`, try-locks the job (never waits),
 * answers `done` or `in-flight` from its row, else runs `work(db)` and writes the done mark before
 * the transaction commits. `work` rejecting rolls everything back (`rolled-back`, with its error), as does
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
  const { jobs, lockKey, timeoutMs } = context;
  const failed: { threw: boolean; error?: unknown } = { threw: false };
  const bound = phaseBound(timeoutMs, jobId);
  const body = async (db: Db, statements: JobStatements): Promise<TransactionResult> => {
    bound.check();
    const { locked, isolation, row } = await statements.open();
    checkIsolation(isolation);
    if (locked !== true) return { state: 'in-flight', retryAfterMs: TRANSACTION_RETRY_AFTER_MS };
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
    await statements.markDone();
    return { state: 'committed' };
  };
  bound.start('the connection, lock and read');
  const running = jobs({ jobId, lockKey: lockKey(jobId), doneTtlMs }, body).catch((err: unknown): TransactionResult => {
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

/** PostgreSQL runs READ UNCOMMITTED as READ COMMITTED. */
function isReadCommitted(isolation: unknown): boolean {
  return isolation === READ_COMMITTED || isolation === 'read uncommitted';
}

/** Refuses a transaction whose isolation level is not READ COMMITTED (see the read above). */
function checkIsolation(isolation: unknown): void {
  if (isReadCommitted(isolation)) return;
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
