// The per-organization indexes behind listJobs: the memory store's drops its forgotten jobs, the
// Redis store's sorted set loses the jobs that are gone; neither shows another organization's jobs.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { JobRecord } from '../../src/jobs/job-record.js';
import { MAX_SCANNED_PER_PAGE } from '../../src/jobs/job-list.js';
import { createMemoryJobStore } from '../../src/jobs/memory-job-store.js';
import { createRedisJobStore } from '../../src/jobs/redis-job-store.js';
import { buildJob, successResult } from './job-fixtures.js';

/** A final job without a receiver: settled at once, so the memory store may drop it. */
const settledJob = (organizationId: string): JobRecord =>
  buildJob({ organizationId, ...successResult(), webhookReceiver: null, delivery: null });

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.dispose();
});

describe('memory store index', () => {
  it('lists only what the store still holds: jobs dropped beyond maxJobs leave the list', async () => {
    const store = createMemoryJobStore({ maxJobs: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const job = settledJob('acme');
      ids.push(job.jobId);
      await store.create(job);
    }
    const page = await store.listJobs('acme', { limit: 10 });
    expect(page.jobs.map((j) => j.jobId)).toEqual(ids.slice(2).reverse());
    expect(page.nextCursor).toBeNull();
  });

  it('keeps each organization to its own jobs, and a list does not refresh the jobs it reads', async () => {
    const store = createMemoryJobStore({ maxJobs: 2 });
    const a = settledJob('acme');
    const b = settledJob('globex');
    await store.create(a);
    await store.create(b);
    expect((await store.listJobs('globex', { limit: 10 })).jobs.map((j) => j.jobId)).toEqual([b.jobId]);
    // Listing acme must not make `a` the most recently used: the next job still drops it first.
    await store.listJobs('acme', { limit: 10 });
    await store.create(settledJob('globex'));
    expect((await store.listJobs('acme', { limit: 10 })).jobs).toEqual([]);
  });

  it('compacts: after many drops the list still pages correctly through what is left', async () => {
    const store = createMemoryJobStore({ maxJobs: 50 });
    const ids: string[] = [];
    for (let i = 0; i < 400; i++) {
      const job = settledJob(i % 2 === 0 ? 'acme' : 'globex');
      if (i % 2 === 0) ids.push(job.jobId);
      await store.create(job);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listJobs('acme', { limit: 7, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.jobs.map((j) => j.jobId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(ids.slice(-25).reverse());
  });

  it('scans a bounded part of the index per page: a filter matching nothing still answers with a cursor', async () => {
    const store = createMemoryJobStore();
    for (let i = 0; i < MAX_SCANNED_PER_PAGE + 5; i++) await store.create(settledJob('acme'));
    const first = await store.listJobs('acme', { limit: 10, status: 'fail' });
    expect(first.jobs).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    const second = await store.listJobs('acme', { limit: 10, status: 'fail', cursor: first.nextCursor! });
    expect(second).toEqual({ jobs: [], nextCursor: null });
  });
});

describe('redis store index', () => {
  it('a job gone from Redis (expired) is left out and leaves the sorted set', async () => {
    const prefix = `idx-${randomUUID().slice(0, 8)}:`;
    const store = await createRedisJobStore({ redis: server.url, prefix });
    const client = new Redis(server.url);
    try {
      const jobs = [settledJob('acme'), settledJob('acme'), settledJob('globex')];
      for (const job of jobs) await store.create(job);
      expect((await store.listJobs('acme', { limit: 10 })).jobs.map((j) => j.jobId)).toEqual([jobs[1]!.jobId, jobs[0]!.jobId]);
      await client.del(`${prefix}job:{${jobs[0]!.jobId}}`);
      expect((await store.listJobs('acme', { limit: 10 })).jobs.map((j) => j.jobId)).toEqual([jobs[1]!.jobId]);
      expect(await client.zrange(`${prefix}org-jobs:{acme}`, '0', '-1')).toEqual([jobs[1]!.jobId]);
      // The set expires with the organization's last job.
      const ttl = await client.pttl(`${prefix}org-jobs:{acme}`);
      expect(ttl).toBeGreaterThan(0);
    } finally {
      client.disconnect();
      await store.close();
    }
  });

  it('removes index entries older than jobTtlMs when a job is created', async () => {
    const prefix = `idx-${randomUUID().slice(0, 8)}:`;
    const store = await createRedisJobStore({ redis: server.url, prefix, jobTtlMs: 60_000 });
    const client = new Redis(server.url);
    try {
      // An entry scored two minutes ago stands for a job that expired a minute ago.
      await client.zadd(`${prefix}org-jobs:{acme}`, (Date.now() - 120_000) * 1000, randomUUID());
      const job = settledJob('acme');
      await store.create(job);
      expect(await client.zrange(`${prefix}org-jobs:{acme}`, '0', '-1')).toEqual([job.jobId]);
    } finally {
      client.disconnect();
      await store.close();
    }
  });
});
