import { randomUUID } from 'node:crypto';
import type { ClaimResult, TagNonceBinding } from '@jobhook/core';
import { MAX_TOKEN_LENGTH } from '@jobhook/core/internal';
import type { PoolClient } from 'pg';
import { type JobRunner, runJobTransaction, runnerJobs } from './job-transaction.js';
import { openPool } from './open-pool.js';
import type { PostgresConnection } from './options/connection-option.js';
import { resolvePostgresStoreOptions, type PostgresStoreOptions } from './options/postgres-store-options.js';
import { checkFencedArgs, checkStoreJobId, checkStoreNonce, msArgument, sweepLimit } from './options/store-arguments.js';
import { poolJobs, poolTransaction } from './pool-transaction.js';
import type { PostgresLeaseStore, PostgresStore, PostgresStoreMethods } from './postgres-store.js';
import { pgExecutor, type TransactionRunner } from './sql-executor.js';
import { closedError, unavailable, withTimeout, type StoreOperation } from './store-errors.js';
import { storeSql } from './store-sql.js';

/** Claim statements retried when a concurrent claim committed after the statement's snapshot. */
const CLAIM_ATTEMPTS = 5;
const DONE: ClaimResult = Object.freeze({ state: 'done' });

/** One row of the claim statement. */
interface ClaimRow {
  claimed: boolean;
  found: boolean;
  done: boolean | null;
  live: boolean | null;
  ms_left: number | null;
}

/** One row of the bindNonce statement. */
interface BindRow {
  bound: boolean;
  found: boolean;
  live: boolean | null;
  bound_to: string | null;
}

/**
 * Creates an idempotency store on PostgreSQL. Call `migrate()` once before use (it creates the
 * table). In transactional mode (the default) the receiver runs each handler inside a transaction
 * of this store and hands it over as `ctx.db`: the handler's writes and the job's done mark commit
 * together, so a crash, a rollback or a failed commit leaves both or neither (exactly-once effects).
 * A concurrent delivery of a job whose transaction is open is answered "in flight" at once (a
 * `pg_try_advisory_xact_lock`, never a wait); a receiver that dies mid-handler has its transaction
 * rolled back by the server when its connection drops, so the sender's next retry runs the job.
 *
 * Without a transaction (`claim`/`complete`/`release`/`extend`, and `transactional: false`) it
 * behaves as the Redis store: leases on the server's clock, fencing tokens.
 *
 * In either mode it binds recipient tag nonces to their first job (`bindTagNonce`, a row of the
 * same table, written in its own statement: outside any handler's transaction, so a rollback keeps it).
 *
 * @example
 * ```ts
 * const store = createPostgresStore({ pool });
 * await store.migrate();
 * createReceiver({ publicKeys, store, onEvent: async (event, ctx) => {
 *   await ctx.db.query('INSERT INTO results (job_id) VALUES ($1)', [ctx.jobId]);
 * } });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` at construction when an option is wrong. Methods
 * reject with `ERR_OPTION_INVALID` on a bad argument and `ERR_STORE_UNAVAILABLE` when PostgreSQL
 * cannot be reached, errs, or does not answer in time.
 */
export function createPostgresStore(
  connection: PostgresConnection,
  options: PostgresStoreOptions<never> & { transactional: false },
): PostgresLeaseStore;
export function createPostgresStore(
  connection: PostgresConnection,
  options?: PostgresStoreOptions<PoolClient> & { transaction?: undefined },
): PostgresStore<PoolClient>;
export function createPostgresStore<Db>(
  connection: PostgresConnection,
  options: PostgresStoreOptions<Db> & { transaction: TransactionRunner<Db> },
): PostgresStore<Db>;
export function createPostgresStore<Db>(
  connection: PostgresConnection,
  options: PostgresStoreOptions<Db> = {},
): PostgresStore<Db> | PostgresLeaseStore {
  const o = resolvePostgresStoreOptions(connection, options);
  const { table, operationTimeoutMs: timeoutMs, sweepIntervalMs: sweepEvery } = o;
  const { pool, owned } = openPool(o.connection, timeoutMs);
  const sql = storeSql(table);
  const direct = pgExecutor(pool);
  // A runner of the caller's owns BEGIN and COMMIT, and takes one parameterized statement at a time;
  // on the store's own pool the statements go in batches around them (see poolJobs).
  const jobs = (o.transaction === undefined ? poolJobs(pool, timeoutMs, sql) : runnerJobs(o.transaction, sql)) as JobRunner<Db>;

  let closing: Promise<void> | undefined;
  const checkOpen = (operation: StoreOperation): void => {
    if (closing !== undefined) throw closedError(operation);
  };
  /** One statement on the pool, bounded by `timeoutMs`. */
  const query = async (operation: StoreOperation, text: string, values: unknown[], jobId?: string) =>
    (await withTimeout(direct.executeSql(text, values), timeoutMs, operation, jobId)).rows;
  /** complete/release/extend: true when the statement changed the token's row. */
  const fenced = async (operation: 'complete' | 'release' | 'extend', text: string, values: unknown[]): Promise<boolean> =>
    (await query(operation, text, values, values[0] as string)).length === 1;
  const lockKey = (jobId: string): string => `jobhook:${table.plain}:${jobId}`;

  async function claim(jobId: string, claimOptions: { leaseMs: number }): Promise<ClaimResult> {
    checkOpen('claim');
    checkStoreJobId('postgresStore.claim', jobId);
    const leaseMs = msArgument('postgresStore.claim', claimOptions, 'leaseMs');
    const token = randomUUID();
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const [row] = (await query('claim', sql.claim, [jobId, token, leaseMs], jobId)) as unknown as ClaimRow[];
      if (row?.claimed === true) return { state: 'claimed', token };
      if (row?.found === true && row.live === true) {
        return row.done === true ? DONE : { state: 'in-flight', retryAfterMs: row.ms_left ?? 1 };
      }
      // Lost to a claim committed after this statement's snapshot: ask again, it is visible now.
    }
    throw unavailable('claim', new Error(`the claim lost ${CLAIM_ATTEMPTS} races in a row`), jobId);
  }

  async function bindTagNonce(nonce: string, jobId: string, bindOptions: { ttlMs: number }): Promise<TagNonceBinding> {
    checkOpen('bindTagNonce');
    checkStoreNonce('postgresStore.bindTagNonce', nonce);
    checkStoreJobId('postgresStore.bindTagNonce', jobId);
    const ttlMs = msArgument('postgresStore.bindTagNonce', bindOptions, 'ttlMs');
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const [row] = (await query('bindTagNonce', sql.bindNonce, [`tag:${nonce}`, jobId, ttlMs], jobId)) as unknown as BindRow[];
      if (row?.bound === true) return 'bound';
      if (row?.found === true && row.live === true) return row.bound_to === jobId ? 'same' : 'other';
      // Lost to a binding committed after this statement's snapshot: ask again, it is visible now.
    }
    throw unavailable('bindTagNonce', new Error(`the binding lost ${CLAIM_ATTEMPTS} races in a row`), jobId);
  }

  // Sweeps running, and sweep statements still running on the server (one whose wait timed out
  // goes on there): the timer starts no sweep while either is non-zero.
  let sweeps = 0;
  let sweepStatements = 0;
  async function sweep(sweepOptions: { limit?: number } = {}): Promise<number> {
    checkOpen('sweep');
    const limit = sweepLimit(sweepOptions);
    sweeps++;
    try {
      let total = 0;
      for (;;) {
        sweepStatements++;
        const statement = direct.executeSql(sql.sweep, [limit]);
        statement.then(
          () => sweepStatements--,
          () => sweepStatements--,
        );
        const [row] = (await withTimeout(statement, timeoutMs, 'sweep')).rows;
        const deleted = Number(row?.['deleted'] ?? 0);
        total += deleted;
        if (deleted < limit || closing !== undefined) return total;
      }
    } finally {
      sweeps--;
    }
  }

  // One sweep at a time: on a slow database a sweep can outlast the interval, and overlapping ones
  // would only pile up connections and statements that skip each other's rows.
  const sweepOnTimer = (): void => {
    if (sweeps > 0 || sweepStatements > 0) return;
    void sweep().catch(() => undefined);
  };
  const timer = sweepEvery === false ? undefined : setInterval(sweepOnTimer, sweepEvery).unref();

  const methods: PostgresStoreMethods & Omit<PostgresLeaseStore, keyof PostgresStoreMethods> = {
    table: table.plain,
    claim,
    bindTagNonce,
    async complete(jobId, token, completeOptions) {
      checkOpen('complete');
      checkFencedArgs('postgresStore.complete', jobId, token);
      const ttlMs = msArgument('postgresStore.complete', completeOptions, 'ttlMs');
      return plausibleToken(token) && fenced('complete', sql.complete, [jobId, token, ttlMs]);
    },
    async release(jobId, token) {
      checkOpen('release');
      checkFencedArgs('postgresStore.release', jobId, token);
      return plausibleToken(token) && fenced('release', sql.release, [jobId, token]);
    },
    async extend(jobId, token, extendOptions) {
      checkOpen('extend');
      checkFencedArgs('postgresStore.extend', jobId, token);
      const leaseMs = msArgument('postgresStore.extend', extendOptions, 'leaseMs');
      return plausibleToken(token) && fenced('extend', sql.extend, [jobId, token, leaseMs]);
    },
    async migrate() {
      checkOpen('migrate');
      await poolTransaction(
        pool,
        timeoutMs,
      )(async (_client, tx) => {
        await tx.executeSql(sql.migrateLock, [`jobhook:migrate:${table.plain}`]);
        for (const statement of sql.migrate) await tx.executeSql(statement, []);
      }).catch((err: unknown) => {
        throw unavailable('migrate', err);
      });
    },
    sweep,
    close() {
      if (timer !== undefined) clearInterval(timer);
      closing ??= owned ? pool.end() : Promise.resolve();
      return closing;
    },
  };
  if (!o.transactional) return Object.freeze(methods);

  const store: PostgresStore<Db> = {
    ...methods,
    async runInTransaction(jobId, transactionOptions, work) {
      checkOpen('transaction');
      checkStoreJobId('postgresStore.runInTransaction', jobId);
      const doneTtlMs = msArgument('postgresStore.runInTransaction', transactionOptions, 'doneTtlMs');
      return runJobTransaction({ jobs, lockKey, timeoutMs }, jobId, doneTtlMs, work);
    },
  };
  return Object.freeze(store);
}

/** A token this store could have issued; any other cannot match, so no round trip is needed. */
function plausibleToken(token: string): boolean {
  return token.length > 0 && token.length <= MAX_TOKEN_LENGTH;
}
