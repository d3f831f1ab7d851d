// One tag, one job on a real PostgreSQL: the copied-tag attacks the memory and Redis stores face
// (core's tag-binding-scenarios.ts), in both modes of the store, and a handler's rollback, which
// must not take the binding with it (the nonce is bound in a statement of its own, before the
// handler's transaction).
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { REUSED, describeTagBinding, freshTag, summary, tagReceiver, tagged } from '../../core/test/helpers/tag-binding-scenarios.js';
import { usePostgres } from './helpers/postgres-fixture.js';

const postgres = usePostgres({ max: 20 });
const table = (): string => `jobhook_tag_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

describeTagBinding('postgres store (transactional)', async () => {
  const store = createPostgresStore({ pool: postgres.pool }, { table: table() });
  await store.migrate();
  return store;
});
describeTagBinding('postgres store (transactional: false)', async () => {
  const store = createPostgresStore({ pool: postgres.pool }, { table: table(), transactional: false });
  await store.migrate();
  return store;
});

describe('the tag binding on PostgreSQL', () => {
  it('commits the binding, and leaves the pooled connection’s synchronous_commit as it was (the async commit is the statement’s own)', async () => {
    const one = postgres.server.pool({ max: 1 });
    const store = createPostgresStore({ pool: one }, { table: table() });
    postgres.track(store, { close: () => one.end() });
    await store.migrate();
    const before = (await one.query('SHOW synchronous_commit')).rows[0].synchronous_commit;
    expect(await store.bindTagNonce('n'.repeat(22), randomUUID(), { ttlMs: 60_000 })).toBe('bound');
    expect((await one.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe(before);
    // Committed: another connection sees it.
    expect(await store.bindTagNonce('n'.repeat(22), randomUUID(), { ttlMs: 60_000 })).toBe('other');
  });

  it("outlives the handler's rollback: the copy on another job is refused, the job's redelivery commits", async () => {
    const store = createPostgresStore({ pool: postgres.pool }, { table: table() });
    postgres.track(store);
    await store.migrate();
    const results = `results_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await postgres.pool.query(`CREATE TABLE ${results} (job_id text NOT NULL)`);
    let failures = 1;
    const { receiver } = tagReceiver(store, {
      onEvent: async (event, ctx) => {
        // tagReceiver's options are typed for any store: here ctx.db is the transaction's pg client.
        await (ctx.db as unknown as pg.PoolClient).query(`INSERT INTO ${results} (job_id) VALUES ($1)`, [event.job_id]);
        if (failures-- > 0) throw new Error('constraint violated further on');
      },
    });
    const tag = freshTag();
    const own = tagged(tag);
    expect(summary(await receiver.handle(own))).toEqual([500, 'handler-failed', 'ERR_HANDLER_FAILED']);
    expect((await postgres.pool.query(`SELECT job_id FROM ${results}`)).rows).toEqual([]); // rolled back
    expect(summary(await receiver.handle(tagged(tag)))).toEqual(REUSED);
    expect(summary(await receiver.handle(own))).toEqual([200, 'handled', undefined]);
    expect((await postgres.pool.query(`SELECT job_id FROM ${results}`)).rows).toEqual([{ job_id: own.event.job_id }]);
  });
});
