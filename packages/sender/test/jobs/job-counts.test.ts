// What each store's job counts promise beyond the shared contract (job-store-conformance): they
// follow the jobs the store forgets (memory: TTL, eviction, an oversized log; Redis: TTL, a record
// gone early), and in Redis a late tally of an older write of a job cannot undo a newer one.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import { createMemoryJobStore } from '../../src/jobs/memory-job-store.js';
import { createRedisJobStore } from '../../src/jobs/redis-job-store.js';
import { buildAttempt, buildJob, successResult } from './job-fixtures.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.dispose();
});

/** A job without receiver: settled as soon as it is finished. */
const plainJob = (organizationId: string) => buildJob({ organizationId, webhookReceiver: null, delivery: null });

describe('memory store counts', () => {
  it('leave a settled job out once its TTL ran out, without anything reading it', async () => {
    let t = 1_000;
    const store = createMemoryJobStore({ settledTtlMs: 1000, now: () => t });
    const organizationId = `org-${randomUUID()}`;
    const settled = [plainJob(organizationId), plainJob(organizationId)];
    for (const job of settled) {
      await store.create(job);
      await store.finish(job.jobId, successResult());
    }
    t += 500;
    await store.create(plainJob(organizationId)); // processing: never expires
    await store.finish(settled[1]!.jobId, successResult()); // refused (already final): its TTL does not restart
    expect((await store.countJobs(organizationId)).status).toEqual({ processing: 1, success: 2, fail: 0 });
    t += 501;
    expect((await store.countJobs(organizationId)).status).toEqual({ processing: 1, success: 0, fail: 0 });
    expect((await store.listJobs(organizationId, { limit: 10 })).jobs).toHaveLength(1);
  });

  it('leave out jobs dropped beyond maxJobs and a job whose log outgrew maxBytes', async () => {
    const store = createMemoryJobStore({ maxJobs: 3, maxBytes: 1024 * 1024 });
    const organizationId = `org-${randomUUID()}`;
    for (let i = 0; i < 5; i++) {
      const job = plainJob(organizationId);
      await store.create(job);
      await store.finish(job.jobId, successResult());
    }
    expect((await store.countJobs(organizationId)).jobs).toBe(3);
    const [newest] = (await store.listJobs(organizationId, { limit: 1 })).jobs;
    for (let n = 1; n <= 3; n++) await store.appendAttempt(newest!.jobId, buildAttempt(n, { errorMessage: 'z'.repeat(200 * 1024) }));
    expect(await store.get(newest!.jobId)).toBeUndefined();
    expect(await store.countJobs(organizationId)).toMatchObject({ jobs: 2, status: { success: 2 }, delivery: { none: 2 } });
  });
});

describe('redis store counts', () => {
  it('leave jobs out once past jobTtlMs, before any list or creation prunes them', async () => {
    const store = await createRedisJobStore({ redis: server.url, prefix: `cnt-${randomUUID().slice(0, 8)}:`, jobTtlMs: 300 });
    try {
      const organizationId = `org-${randomUUID()}`;
      await store.create(plainJob(organizationId));
      await store.create(buildJob({ organizationId }));
      expect((await store.countJobs(organizationId)).jobs).toBe(2);
      await expect.poll(async () => (await store.countJobs(organizationId)).jobs, { timeout: 5_000 }).toBe(0);
      expect((await store.listJobs(organizationId, { limit: 10 })).jobs).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('leave out a job whose record went early, once a list met it', async () => {
    const prefix = `cnt-${randomUUID().slice(0, 8)}:`;
    const store = await createRedisJobStore({ redis: server.url, prefix });
    const client = new Redis(server.url);
    try {
      const organizationId = `org-${randomUUID()}`;
      const [a, b] = [plainJob(organizationId), plainJob(organizationId)];
      await store.create(a);
      await store.create(b);
      await client.del(`${prefix}job:{${a.jobId}}`);
      await store.listJobs(organizationId, { limit: 10 });
      expect(await store.countJobs(organizationId)).toMatchObject({ jobs: 1, status: { processing: 1 }, delivery: { none: 1 } });
    } finally {
      client.disconnect();
      await store.close();
    }
  });

  it('ignore a tally that arrives after a newer one of the same job (two processes, out of order)', async () => {
    const prefix = `cnt-${randomUUID().slice(0, 8)}:`;
    const client = new Redis(server.url);
    const store = await createRedisJobStore({ redis: client, prefix });
    try {
      const organizationId = `org-${randomUUID()}`;
      const job = buildJob({ organizationId });
      await store.create(job); // revision 1: processing, pending
      await store.finish(job.jobId, successResult()); // 2: success, pending
      await store.endRound(job.jobId, 0, 'delivered'); // 3: success, delivered
      const expected = {
        jobs: 1,
        status: { processing: 0, success: 1, fail: 0 },
        delivery: { pending: 0, delivered: 1, rejected: 0, failed: 0, none: 0 },
      };
      expect(await store.countJobs(organizationId)).toEqual(expected);
      // Revision 2's tally, late: another process wrote it, then stalled before tallying.
      const keys = [
        `${prefix}org-jobs:{${organizationId}}`,
        `${prefix}org-revisions:{${organizationId}}`,
        ...['processing', 'success', 'fail'].map((s) => `${prefix}org-status-${s}:{${organizationId}}`),
        ...['pending', 'delivered', 'rejected', 'failed', 'none'].map((d) => `${prefix}org-delivery-${d}:{${organizationId}}`),
      ];
      const tally = (revision: number): Promise<number> =>
        (client as unknown as { jobhookSenderTallyV1(...a: (string | number)[]): Promise<number> }).jobhookSenderTallyV1(
          ...keys,
          job.jobId,
          revision,
          4, // success
          6, // pending
        );
      expect(await tally(2)).toBe(0);
      expect(await store.countJobs(organizationId)).toEqual(expected);
      // The same tally with a newer revision does move the job: the revision is what held it back.
      expect(await tally(4)).toBe(1);
      expect((await store.countJobs(organizationId)).delivery).toMatchObject({ pending: 1, delivered: 0 });
    } finally {
      await store.close();
      client.disconnect();
    }
  });
});
