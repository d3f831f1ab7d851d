import type { Pool, PoolClient } from 'pg';
import { pgExecutor, type TransactionRunner } from './sql-executor.js';

/**
 * The default {@link TransactionRunner}: a client of `pool`, `BEGIN`, `body(client)`, `COMMIT`, or
 * `ROLLBACK` when anything rejects. A client whose connection failed is destroyed rather than
 * returned to the pool.
 */
export function poolTransaction(pool: Pool): TransactionRunner<PoolClient> {
  return async (body) => {
    const client = await pool.connect();
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
