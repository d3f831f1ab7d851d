import pg, { type Pool } from 'pg';
import type { PostgresConnection } from './options/connection-option.js';

/**
 * The pool of a checked connection (`checkConnection`), and whether the store (or ledger) made it,
 * and so ends it on close.
 */
export function openPool(connection: PostgresConnection, timeoutMs: number): { pool: Pool; owned: boolean } {
  if ('pool' in connection) return { pool: connection.pool, owned: false };
  const owned = new pg.Pool({ connectionString: connection.connectionString, connectionTimeoutMillis: timeoutMs });
  // An idle client whose server went away emits 'error' on the pool: without a listener that
  // would end the process. The next query reconnects, or fails with ERR_STORE_UNAVAILABLE.
  owned.on('error', () => undefined);
  return { pool: owned, owned: true };
}
