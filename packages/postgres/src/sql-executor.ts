import type { PoolClient } from 'pg';

/**
 * Runs one parameterized SQL statement (`$1`, `$2`, … placeholders) and resolves with its rows: the
 * one method the store needs of a transaction, so a transaction of any library can carry the done
 * mark (the pg-boss way). pg's `client.query` has this shape already; for Kysely it is
 * `trx.executeQuery(CompiledQuery.raw(text, values))`.
 */
export interface SqlExecutor {
  executeSql(text: string, values: unknown[]): Promise<{ rows: readonly Record<string, unknown>[] }>;
}

/** A {@link SqlExecutor} over a pg client (or pool): `client.query(text, values)`. */
export function pgExecutor(client: Pick<PoolClient, 'query'>): SqlExecutor {
  return {
    executeSql: async (text, values) => {
      const result = await client.query(text, values);
      return { rows: result.rows as Record<string, unknown>[] };
    },
  };
}

/**
 * Opens a transaction in your database library, calls `body` with the library's transaction object
 * (what handlers get as `ctx.db`) and a {@link SqlExecutor} running on that same transaction, then
 * commits when `body` resolves and rolls back when it rejects (rejecting with its error). Kysely's
 * `db.transaction().execute(cb)`, Knex's `knex.transaction(cb)`, Drizzle's `db.transaction(cb)` and
 * Prisma's `$transaction(cb)` all behave so.
 */
export type TransactionRunner<Db> = <T>(body: (db: Db, sql: SqlExecutor) => Promise<T>) => Promise<T>;
