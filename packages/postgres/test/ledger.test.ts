// The expected-jobs ledger on a real PostgreSQL: the contract suite, writes joining a caller's
// transaction, and a webhook and a poll of one job arriving together at a transactional receiver.
import { randomUUID } from 'node:crypto';
import { createReceiver, silentLogger } from '@jobhook/core';
import { createFakeClock, describeLedgerConformance, rejectionCode, buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresLedger, createPostgresStore, pgExecutor } from '../src/index.js';
import { usePostgres } from './helpers/postgres-fixture.js';

const pg = usePostgres({ max: 20 });
const table = (): string => `jobhook_ledger_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

describeLedgerConformance(
  'postgres ledger',
  async (clock) => {
    const ledger = createPostgresLedger({ pool: pg.pool }, { table: table(), clock });
    await ledger.migrate();
    return ledger;
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe('createPostgresLedger', () => {
  it('begin and attach join the caller’s transaction: rolled back with it, committed with it', async () => {
    const clock = createFakeClock(Date.UTC(2025, 0, 1));
    const ledger = createPostgresLedger({ pool: pg.pool }, { table: table(), schema: 'jobhook_ledger_test', clock });
    pg.track(ledger);
    await ledger.migrate();
    const client = await pg.pool.connect();
    try {
      await client.query('BEGIN');
      await ledger.begin('rolled-back', { dueAt: clock.now(), executor: pgExecutor(client) });
      await client.query('ROLLBACK');
      expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
      await client.query('BEGIN');
      await ledger.begin('committed', { dueAt: clock.now(), executor: pgExecutor(client) });
      await ledger.attach('committed', randomUUID(), { executor: pgExecutor(client) });
      // Not visible outside the transaction before COMMIT.
      expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
      await client.query('COMMIT');
      expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
    } finally {
      client.release();
    }
  });

  it('a lease held by an open transaction is skipped, not waited for (FOR UPDATE SKIP LOCKED)', async () => {
    const clock = createFakeClock(Date.UTC(2025, 0, 1));
    const ledger = createPostgresLedger({ pool: pg.pool }, { table: table(), clock });
    pg.track(ledger);
    await ledger.migrate();
    for (const k of ['a', 'b']) await ledger.begin(k, { dueAt: clock.now() });
    const client = await pg.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT key FROM "${ledger.table}" WHERE key = 'a' FOR UPDATE`);
      const leased = await ledger.lease({ limit: 10, leaseMs: 1000 });
      expect(leased.map((e) => e.key)).toEqual(['b']);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('refuses bad options and reports a missing table as ERR_STORE_UNAVAILABLE', async () => {
    expect(() => createPostgresLedger({ pool: pg.pool }, { table: 'bad name' })).toThrow(/table must be an SQL identifier/);
    expect(() => createPostgresLedger({ connectionString: 'mysql://x' })).toThrow(/postgres:\/\//);
    const ledger = createPostgresLedger({ pool: pg.pool }, { table: table() });
    expect(await rejectionCode(ledger.count())).toBe('ERR_STORE_UNAVAILABLE');
    expect(await rejectionCode(ledger.begin('k', { dueAt: 0, executor: {} as never }))).toBe('ERR_OPTION_INVALID');
  });
});

describe('webhook and poll of one job together, on the transactional PostgreSQL store', () => {
  it('the handler runs once, one row written, whichever wins; the loser is told in flight or duplicate', async () => {
    const keys = createTestKeyPair();
    const results = table();
    await pg.pool.query(`CREATE TABLE "${results}" (job_id text NOT NULL, source text NOT NULL)`);
    const store = createPostgresStore({ pool: pg.pool }, { table: table() });
    await store.migrate();
    const ledger = createPostgresLedger({ pool: pg.pool }, { table: table() });
    await ledger.migrate();
    pg.track(store, ledger);
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      ledger,
      logger: silentLogger,
      async onEvent(_event, ctx) {
        await ctx.db.query(`INSERT INTO "${results}" (job_id, source) VALUES ($1, $2)`, [ctx.jobId, ctx.source]);
        // Long enough for the other path to arrive while this transaction is open.
        await new Promise((r) => setTimeout(r, 100));
      },
    });
    for (let i = 0; i < 10; i++) {
      const req = buildSignedRequest({ status: 'success' });
      const jobId = req.event.job_id;
      await ledger.begin(`k-${jobId}`, { dueAt: Date.now() });
      await ledger.attach(`k-${jobId}`, jobId);
      const poll = { job_id: jobId, status: 'success', output: req.event.output };
      const [webhook, polled] =
        i % 2 === 0
          ? await Promise.all([receiver.handle(req), receiver.handlePolled(poll)])
          : await Promise.all([receiver.handlePolled(poll), receiver.handle(req)]).then(([p, w]) => [w, p] as const);
      expect([webhook.outcome.kind, polled.kind].sort()).toEqual(['handled', 'in-flight']);
      const rows = await pg.pool.query(`SELECT source FROM "${results}" WHERE job_id = $1`, [jobId]);
      expect(rows.rowCount).toBe(1);
      // The loser's retry finds the job done.
      expect((await receiver.handle(req)).outcome.kind).toBe('duplicate');
      expect((await receiver.handlePolled(poll)).kind).toBe('duplicate');
    }
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
    const { rows } = await pg.pool.query(`SELECT count(*)::int AS n FROM "${results}"`);
    expect(rows[0].n).toBe(10);
  });
});
