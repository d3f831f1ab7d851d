// What only the Redis job store promises: its key layout and TTLs, atomic finish across processes
// (two stores, two connections), fail-fast start-up, and a passed-in client left open.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, redisCommand, startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { JobRecord } from '../../src/jobs/job-record.js';
import { createRedisJobStore, DEFAULT_JOB_TTL_MS } from '../../src/jobs/redis-job-store.js';
import { buildAttempt, buildJob, failResult, successResult } from './job-fixtures.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.dispose();
});

const newPrefix = (): string => `jobhook-test-${randomUUID().slice(0, 8)}:`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('createRedisJobStore', () => {
  it('keeps one JSON string per job and a list of attempts, under {jobId} hash tags, with TTLs', async () => {
    const prefix = newPrefix();
    const store = await createRedisJobStore({ redis: server.url, prefix, attemptsTtlMs: 60_000 });
    try {
      const job = buildJob();
      await store.create(job);
      await store.appendAttempt(job.jobId, buildAttempt(1));
      const jobKey = `${prefix}job:{${job.jobId}}`;
      const attemptsKey = `${prefix}attempts:{${job.jobId}}`;
      expect(JSON.parse(String(await redisCommand(server.port, ['GET', jobKey])))).toEqual(job);
      expect(await redisCommand(server.port, ['LLEN', attemptsKey])).toBe(1);
      const jobTtl = Number(await redisCommand(server.port, ['PTTL', jobKey]));
      expect(jobTtl).toBeGreaterThan(DEFAULT_JOB_TTL_MS - 10_000);
      expect(jobTtl).toBeLessThanOrEqual(DEFAULT_JOB_TTL_MS);
      expect(Number(await redisCommand(server.port, ['PTTL', attemptsKey]))).toBeGreaterThan(50_000);
      // finish and setDelivery keep the TTL set at creation.
      await store.finish(job.jobId, successResult());
      await store.setDelivery(job.jobId, 'delivered');
      expect(Number(await redisCommand(server.port, ['PTTL', jobKey]))).toBeGreaterThan(DEFAULT_JOB_TTL_MS - 10_000);
    } finally {
      await store.close();
    }
  });

  it('forgets jobs and attempts after their TTL', async () => {
    const store = await createRedisJobStore({ redis: server.url, prefix: newPrefix(), jobTtlMs: 100 });
    try {
      const job = buildJob();
      await store.create(job);
      await store.appendAttempt(job.jobId, buildAttempt(1));
      expect(await store.get(job.jobId)).toEqual(job);
      await sleep(180);
      expect(await store.get(job.jobId)).toBeUndefined();
      expect(await store.listAttempts(job.jobId)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('lets one of two processes finish each job, with setDelivery racing alongside and not lost', async () => {
    const prefix = newPrefix();
    const a = await createRedisJobStore({ redis: server.url, prefix });
    const b = await createRedisJobStore({ redis: server.url, prefix });
    try {
      const jobs = Array.from({ length: 30 }, () => buildJob({ delivery: null }));
      for (const job of jobs) await a.create(job);
      const results = await Promise.all(
        jobs.map(async (job, i) => {
          // Both read the job while it is `processing` (their GETs go out in the same tick); without
          // the compare-and-set both would write and both return a record.
          const finishA = (): Promise<unknown> => a.finish(job.jobId, successResult('a'));
          const finishB = (): Promise<unknown> => b.finish(job.jobId, failResult);
          const [first, second] = i % 2 === 0 ? [finishA(), finishB()] : [finishB(), finishA()];
          await a.setDelivery(job.jobId, 'pending', 2);
          const [r1, r2] = await Promise.all([first, second]);
          const [fromA, fromB] = (i % 2 === 0 ? [r1, r2] : [r2, r1]) as [JobRecord | undefined, JobRecord | undefined];
          return { job, fromA, fromB };
        }),
      );
      for (const { job, fromA, fromB } of results) {
        expect([fromA, fromB].filter((r) => r !== undefined)).toHaveLength(1);
        const stored = await b.get(job.jobId);
        expect(stored?.status).toBe((fromA ?? fromB)?.status);
        // The concurrent setDelivery was not overwritten by the finish (nor the other way round).
        expect(stored).toMatchObject({ delivery: 'pending', deliveryRound: 2 });
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('leaves a client passed in open on close()', async () => {
    const client = new Redis(server.url);
    try {
      const store = await createRedisJobStore({ redis: client });
      await store.close();
      expect(await client.ping()).toBe('PONG');
      await expect(store.get(randomUUID())).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    } finally {
      client.disconnect();
    }
  });

  it('fails with ERR_STORE_UNAVAILABLE when Redis cannot be reached (rejects, does not wait for it)', async () => {
    const port = await freePort();
    // Rejected rather than held: a store that kept retrying would fail at the test timeout. No
    // wall-clock bound on how fast, on a busy machine.
    await expect(createRedisJobStore({ redis: `redis://127.0.0.1:${port}` })).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
  });

  it('fails operations with ERR_STORE_UNAVAILABLE when Redis goes away, and works again when it is back', async () => {
    const own = await startRedisServer({ own: true });
    const store = await createRedisJobStore({ redis: own.url, prefix: newPrefix() });
    try {
      const job = buildJob();
      await store.create(job);
      await own.stop();
      await expect(store.get(job.jobId)).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
      await own.restart();
      // Retried as a caller would until the store answers again (no count of tries: how long the
      // reconnection takes on a busy machine is not the point; never reconnecting fails at the test timeout).
      let back = false;
      while (!back) {
        back = await store.get(job.jobId).then(
          () => true,
          () => false,
        );
        if (!back) await sleep(20);
      }
      // Working again: the restarted Redis is empty (nothing persisted), and a job written now is read back.
      expect(await store.get(job.jobId)).toBeUndefined();
      await store.create(job);
      expect(await store.get(job.jobId)).toEqual(job);
    } finally {
      await store.close();
      await own.dispose();
    }
  });

  it('refuses bad options with ERR_OPTION_INVALID', async () => {
    await expect(createRedisJobStore({ redis: 'http://x' })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createRedisJobStore({ redis: 42 as never })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createRedisJobStore({ redis: server.url, prefix: 'a{b}' })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createRedisJobStore({ redis: server.url, jobTtlMs: 0 })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createRedisJobStore({ redis: server.url, attemptsTtlMs: 1.5 })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
  });
});
