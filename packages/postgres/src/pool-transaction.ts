import type { Pool, PoolClient, QueryResult } from 'pg';
import type { JobRow, JobRunner } from './job-transaction.js';
import { pgExecutor, type TransactionRunner } from './sql-executor.js';
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

/**
 * The store's own {@link JobRunner} on a client of `pool`: two round trips for a job it runs,
 * `BEGIN; try-lock; read` then `done mark; COMMIT`, each one query of several statements without
 * parameters (pg sends a query without values as one simple-protocol message, and the server runs and
 * answers each statement in turn). Pipelining parameterized statements is no option here: pg sends a
 * query only after the previous one's answer, unless the pool's owner made its clients with
 * `pipeline: true` (an option of recent pg 8 releases; the peer range starts at 8.11). The values are written into the text as
 * literals (see textLiteral). A job it does not run (done, in flight) costs `BEGIN; try-lock; read`
 * then `COMMIT`.
 */
export function poolJobs(pool: Pool, connectTimeoutMs: number, sql: StoreSql): JobRunner<PoolClient> {
  return (job, body) => {
    // From the BEGIN sent until the COMMIT answered: a failure in between needs a ROLLBACK.
    let open = false;
    return onPoolClient(
      pool,
      connectTimeoutMs,
      async (client) => {
        const result = await body(client, {
          async open() {
            open = true;
            const results = (await client.query(sql.openBatch(job.lockKey, job.jobId))) as unknown as QueryResult[];
            const lock = results[1]?.rows[0];
            return { locked: lock?.['locked'], isolation: lock?.['isolation'], row: results[2]?.rows[0] as JobRow | undefined };
          },
          async markDone() {
            await client.query(sql.finishBatch(job.jobId, job.doneTtlMs));
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
