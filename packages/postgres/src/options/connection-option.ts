import { describeValue, optionError, readOption } from '@jobhook/core/internal';
import type { Pool } from 'pg';

/**
 * Where the store's database is: your pg `Pool` (it stays yours: the store never ends it), or a
 * connection string (the store makes its own pool and ends it on `close()`).
 */
export type PostgresConnection = { pool: Pool } | { connectionString: string };

/**
 * The first argument of `createPostgresStore` and `createPostgresLedger`, checked: a pg `Pool`, or a
 * `postgres://` connection string.
 * @throws JobhookError `ERR_OPTION_INVALID` naming what is wrong.
 * @internal
 */
export function checkConnection(where: string, connection: unknown): PostgresConnection {
  const pool = readOption(where, connection, 'pool');
  if (pool !== undefined) {
    if (!isPool(pool)) throw optionError(where, `pool must be a pg Pool, got ${describeValue(pool)}`);
    return { pool };
  }
  const connectionString = (connection as { connectionString?: unknown }).connectionString;
  if (typeof connectionString !== 'string' || !/^postgres(ql)?:\/\//.test(connectionString)) {
    throw optionError(
      where,
      `give { pool } (a pg Pool) or { connectionString } (a postgres:// URL), got ${describeValue(connectionString ?? connection)}`,
    );
  }
  return { connectionString };
}

function isPool(value: unknown): value is Pool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Pool).connect === 'function' &&
    typeof (value as Pool).query === 'function'
  );
}
