import { describeValue, optionError, readOption } from '@jobhook/core/internal';
import pg, { type Pool } from 'pg';
import type { PostgresConnection } from './postgres-store-options.js';

/** The pool to use, and whether the store (or ledger) made it, and so ends it on close. */
export function resolvePool(connection: PostgresConnection, timeoutMs: number, where: string): { pool: Pool; owned: boolean } {
  const pool = readOption(connection, 'pool', where);
  const connectionString = (connection as { connectionString?: unknown }).connectionString;
  if (pool !== undefined) {
    if (!isPool(pool)) throw optionError(where, `pool must be a pg Pool, got ${describeValue(pool)}`);
    return { pool, owned: false };
  }
  if (typeof connectionString !== 'string' || !/^postgres(ql)?:\/\//.test(connectionString)) {
    throw optionError(
      where,
      `give { pool } (a pg Pool) or { connectionString } (a postgres:// URL), got ${describeValue(connectionString ?? connection)}`,
    );
  }
  const owned = new pg.Pool({ connectionString, connectionTimeoutMillis: timeoutMs });
  // An idle client whose server went away emits 'error' on the pool: without a listener that
  // would end the process. The next query reconnects, or fails with ERR_STORE_UNAVAILABLE.
  owned.on('error', () => undefined);
  return { pool: owned, owned: true };
}

function isPool(value: unknown): value is Pool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Pool).connect === 'function' &&
    typeof (value as Pool).query === 'function'
  );
}
