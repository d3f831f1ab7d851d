import type { Pool, PoolClient, QueryResult } from 'pg';
import type { JobRow, JobRunner } from './job-transaction.js';
import { pgExecutor, type TransactionRunner } from './sql-executor.js';
import { sqlState } from './store-errors.js';
import type { StoreSql } from './store-sql.js';

/**
 * The default {@link TransactionRunner}: a client of `pool` (waited for at most `connectTimeoutMs`),
 * `BEGIN`, `body(client)`, `COMMIT`, or `ROLLBACK` when anything rejects. A client whose connection
 * failed is destroyed rather than returned to the pool.
 */
export function poolTransaction(pool: Pool, connectTimeoutMs: number): TransactionRunner<PoolClient> {
  return (body) => {
    let open = false;
    return onPoolClient(
      pool,
      connectTimeoutMs,
      async (client) => {
        open = true;
        await client.query('BEGIN');
        const result = await body(client, pgExecutor(client));
        await client.query('COMMIT');
        open = false;
        return result;
      },
      () => open,
    );
  };
}

/** SQLSTATEs of a prepared statement missing (26000) or already there (42P05) on a connection. */
const PREPARED_GONE = new Set(['26000', '42P05']);

/**
 * The connections (pg clients: the same object across checkouts of one connection) and the store
 * statements prepared on each, shared by the stores of a process: two stores of one table and pool
 * prepare once.
 */
const preparedOn = new WeakMap<object, Set<string>>();

/**
 * The store's own {@link JobRunner} on a client of `pool`: two round trips for a job it runs,
 * `BEGIN; try-lock; read` then `done mark; COMMIT`, each one query of several statements without
 * parameters (pg sends a query without values as one simple-protocol message, and the server runs and
 * answers each statement in turn). Pipelining parameterized statements is no option here: pg sends a
 * query only after the previous one's answer, unless the pool's owner made its clients with
 * `pipeline: true` (an option of recent pg 8 releases; the peer range starts at 8.11). The values are
 * written into the text as literals (see textLiteral). A job it does not run (done, in flight) costs
 * `BEGIN; try-lock; read` then `COMMIT`.
 *
 * The statements run as server-side prepared statements (`EXECUTE`), prepared by one more round trip
 * the first time a connection runs a job: parsing and planning them was most of the database's work
 * per job. A connection that lost them (`DISCARD ALL`, PgBouncer in transaction mode, where the next
 * transaction may run on another server connection) answers 26000: the job goes on with the plain
 * statements, and so does the store from then on.
 */
export function poolJobs(pool: Pool, connectTimeoutMs: number, sql: StoreSql): JobRunner<PoolClient> {
  let usePrepared = true;
  /** Prepares the statements on `client` unless done; false when the store no longer uses them. */
  const prepare = async (client: PoolClient): Promise<boolean> => {
    if (!usePrepared) return false;
    const prepared = preparedOn.get(client) ?? new Set<string>();
    preparedOn.set(client, prepared);
    if (prepared.has(sql.prepared.prepare)) return true;
    try {
      await client.query(sql.prepared.prepare);
    } catch (err) {
      // 42P05: prepared by something this process does not know of (another copy of this module).
      if (!PREPARED_GONE.has(sqlState(err) ?? '')) throw err;
      usePrepared = false;
      return false;
    }
    prepared.add(sql.prepared.prepare);
    return true;
  };
  return (job, body) => {
    // From the BEGIN sent until the COMMIT answered: a failure in between needs a ROLLBACK.
    let open = false;
    let batches = sql as Pick<StoreSql, 'openBatch' | 'finishBatch'>;
    return onPoolClient(
      pool,
      connectTimeoutMs,
      async (client) => {
        const result = await body(client, {
          async open() {
            if (await prepare(client)) batches = sql.prepared;
            open = true;
            let results: QueryResult[];
            try {
              results = (await client.query(batches.openBatch(job.lockKey, job.jobId))) as unknown as QueryResult[];
            } catch (err) {
              if (batches === sql || !PREPARED_GONE.has(sqlState(err) ?? '')) throw err;
              await client.query('ROLLBACK');
              usePrepared = false;
              preparedOn.get(client)?.delete(sql.prepared.prepare);
              batches = sql;
              results = (await client.query(batches.openBatch(job.lockKey, job.jobId))) as unknown as QueryResult[];
            }
            const lock = results[1]?.rows[0];
            return { locked: lock?.['locked'], isolation: lock?.['isolation'], row: results[2]?.rows[0] as JobRow | undefined };
          },
          async markDone() {
            await client.query(batches.finishBatch(job.jobId, job.doneTtlMs));
            open = false;
          },
        });
        if (open) {
          await client.query('COMMIT');
          open = false;
        }
        return result;
      },
      () => open,
    );
  };
}

/**
 * `use(client)` on a client of `pool`, then the client back to the pool; when `use` rejects while
 * `inTransaction()`, a `ROLLBACK` first (a failed statement before `COMMIT` left the transaction open;
 * after a failed `COMMIT` it is a no-op with a warning). A client whose connection failed (the
 * ROLLBACK too) is destroyed rather than returned.
 */
async function onPoolClient<T>(
  pool: Pool,
  connectTimeoutMs: number,
  use: (client: PoolClient) => Promise<T>,
  inTransaction: () => boolean,
): Promise<T> {
  const client = await connectWithin(pool, connectTimeoutMs);
  let broken: Error | undefined;
  // A connection lost mid-transaction (server restart, terminated backend) is emitted as 'error'
  // on a checked-out client, which would end the process: the next query rejects instead.
  const onError = (err: Error): void => {
    broken = err;
  };
  client.on('error', onError);
  try {
    return await use(client);
  } catch (err) {
    if (inTransaction()) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
    }
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * A client of `pool`, or a rejection after `timeoutMs`. A pool's `connectionTimeoutMillis` is 0 (wait
 * forever) unless its owner set it, and a pool whose clients are all in use queues the request: the
 * store must not wait longer than its own bound. A client that arrives after it goes back to the pool.
 */
async function connectWithin(pool: Pool, timeoutMs: number): Promise<PoolClient> {
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no connection of the pool in ${timeoutMs} ms (all in use, or the database does not answer)`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([connecting, timedOut]);
  } catch (err) {
    connecting.then(
      (late) => late.release(),
      () => undefined,
    );
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
