import type { Pool, PoolClient } from 'pg';
import { pgExecutor, type TransactionRunner } from './sql-executor.js';

/**
 * The default {@link TransactionRunner}: a client of `pool` (waited for at most `connectTimeoutMs`),
 * `BEGIN`, `body(client)`, `COMMIT`, or `ROLLBACK` when anything rejects. A client whose connection
 * failed is destroyed rather than returned to the pool.
 */
export function poolTransaction(pool: Pool, connectTimeoutMs: number): TransactionRunner<PoolClient> {
  return async (body) => {
    const client = await connectWithin(pool, connectTimeoutMs);
    let broken: Error | undefined;
    // A connection lost mid-transaction (server restart, terminated backend) is emitted as 'error'
    // on a checked-out client, which would end the process: the next query rejects instead.
    const onError = (err: Error): void => {
      broken = err;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await body(client, pgExecutor(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  };
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
