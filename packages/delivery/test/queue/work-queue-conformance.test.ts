// One contract, two queues: every test here runs against the memory queue and the BullMQ queue
// (on a real redis-server started for this file, a fresh key prefix per queue).
import { randomUUID } from 'node:crypto';
import type { Logger } from '@jobhook/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import { createBullmqWorkQueue } from '../../src/queue/bullmq-work-queue.js';
import { createMemoryWorkQueue } from '../../src/queue/memory-work-queue.js';
import type { QueuedWork, WorkQueue } from '../../src/queue/work-queue.js';
import { createCapturingLogger, createHarness, gate, sleep, taskKey, waitUntil } from './queue-harness.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.dispose();
});

interface MakeOptions {
  concurrency?: number;
  logger?: Logger;
}

// `runs`: how often a handler that always throws is run before the queue gives up on it.
const kinds: { name: string; runs: number; make: (options: MakeOptions) => Promise<WorkQueue> }[] = [
  { name: 'memory', runs: 1, make: async (options) => createMemoryWorkQueue(options) },
  {
    name: 'bullmq',
    runs: 3,
    make: (options) => createBullmqWorkQueue({ connection: server.url, prefix: `jobhook-test-${randomUUID().slice(0, 8)}`, ...options }),
  },
];

describe.each(kinds)('WorkQueue conformance: $name', ({ make, runs }) => {
  const open: WorkQueue[] = [];
  async function newQueue(options: MakeOptions = {}): Promise<WorkQueue> {
    const queue = await make(options);
    open.push(queue);
    return queue;
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((q) => q.close()));
  });

  it('runs a scheduled job after its delay, not before', async () => {
    const queue = await newQueue();
    const h = createHarness();
    await queue.start(h.handlers);
    const t0 = performance.now();
    await queue.scheduleJob('job-a', 250);
    await queue.scheduleJob('job-now', 0);
    await waitUntil(() => h.count('job-a') === 1, 'the delayed job');
    const ranAt = h.jobRuns.find((r) => r.id === 'job-a')?.startedAt ?? 0;
    // BullMQ keeps due times in whole milliseconds: up to 1 ms of rounding.
    expect(ranAt - t0).toBeGreaterThanOrEqual(249);
    expect(ranAt - t0).toBeLessThan(1500);
    // The undelayed job ran first.
    expect(h.jobRuns.map((r) => r.id)).toEqual(['job-now', 'job-a']);
  });

  it('runs a delayed delivery after its delay, and an undelayed one at once', async () => {
    const queue = await newQueue();
    const h = createHarness();
    await queue.start(h.handlers);
    const t0 = performance.now();
    await queue.enqueueDelivery({ jobId: 'j1', round: 0, attempt: 2 }, 200);
    await queue.enqueueDelivery({ jobId: 'j2', round: 0, attempt: 1 });
    await waitUntil(() => h.count('j1/0/2') === 1, 'the delayed delivery');
    const runs = Object.fromEntries(h.deliveryRuns.map((r) => [r.id, r.startedAt - t0]));
    expect(runs['j1/0/2']).toBeGreaterThanOrEqual(199);
    expect(runs['j2/0/1']).toBeLessThan(150);
  });

  it('ignores the same job or the same (jobId, round, attempt) enqueued again while queued', async () => {
    const queue = await newQueue();
    const h = createHarness();
    // Before start, so all of it is queued at once.
    await queue.scheduleJob('job-1', 0);
    await queue.scheduleJob('job-1', 50);
    await queue.enqueueDelivery({ jobId: 'job-1', round: 0, attempt: 1 });
    await queue.enqueueDelivery({ jobId: 'job-1', round: 0, attempt: 1 }, 30);
    await queue.enqueueDelivery({ jobId: 'job-1', round: 0, attempt: 2 });
    await queue.enqueueDelivery({ jobId: 'job-1', round: 1, attempt: 1 });
    expect(await queue.counts()).toEqual({ jobs: 1, deliveries: 3 });
    await queue.start(h.handlers);
    await waitUntil(() => h.deliveryRuns.length === 3 && h.jobRuns.length === 1, 'the queued work');
    await sleep(150); // a duplicate, had it been queued, would have run by now
    expect(h.jobRuns.map((r) => r.id)).toEqual(['job-1']);
    expect(h.deliveryRuns.map((r) => r.id).sort()).toEqual(['job-1/0/1', 'job-1/0/2', 'job-1/1/1']);
  });

  it('ignores a delivery enqueued again while it is running', async () => {
    const queue = await newQueue();
    const hold = gate();
    const h = createHarness(async (_kind, id) => {
      if (id === 'j/0/1') await hold.promise;
    });
    await queue.start(h.handlers);
    await queue.enqueueDelivery({ jobId: 'j', round: 0, attempt: 1 });
    await waitUntil(() => h.count('j/0/1') === 1, 'the delivery to start');
    await queue.enqueueDelivery({ jobId: 'j', round: 0, attempt: 1 });
    hold.open();
    await waitUntil(async () => (await queue.counts()).deliveries === 0, 'the queue to drain');
    await sleep(100);
    expect(h.count('j/0/1')).toBe(1);
  });

  it('runs at most `concurrency` deliveries at once', async () => {
    const queue = await newQueue({ concurrency: 3 });
    const h = createHarness(() => sleep(40));
    await queue.start(h.handlers);
    for (let i = 0; i < 12; i++) await queue.enqueueDelivery({ jobId: `c${i}`, round: 0, attempt: 1 });
    await waitUntil(() => h.deliveryRuns.filter((r) => r.finishedAt !== undefined).length === 12, 'all deliveries');
    expect(h.maxRunning()).toBe(3);
  });

  it('logs a throwing handler and keeps running the rest', async () => {
    const logger = createCapturingLogger();
    const queue = await newQueue({ logger });
    const h = createHarness((_kind, id) => {
      if (id === 'bad/0/1' || id === 'bad-job') throw new Error(`boom ${id}`);
    });
    await queue.start(h.handlers);
    await queue.enqueueDelivery({ jobId: 'bad', round: 0, attempt: 1 });
    await queue.scheduleJob('bad-job', 0);
    await waitUntil(() => logger.lines.some((l) => l.level === 'error'), 'the failure to be logged');
    await queue.enqueueDelivery({ jobId: 'good', round: 0, attempt: 1 });
    await queue.scheduleJob('good-job', 10);
    await waitUntil(() => h.count('good/0/1') === 1 && h.count('good-job') === 1, 'work after the failure');
    const errors = logger.lines.filter((l) => l.level === 'error');
    expect(errors.some((l) => String((l.obj as { err?: Error }).err?.message).includes('boom bad/0/1'))).toBe(true);
  });

  it('hands work whose handler failed for good to abandoned, once, after its last run', async () => {
    const logger = createCapturingLogger();
    const queue = await newQueue({ logger });
    const h = createHarness((_kind, id) => {
      if (id === 'bad/0/1' || id === 'bad-job') throw new Error(`boom ${id}`);
    });
    const given: { work: QueuedWork; message: string; afterRuns: number }[] = [];
    await queue.start({
      ...h.handlers,
      async abandoned(work, err) {
        const id = work.kind === 'job' ? work.jobId : taskKey(work.task);
        given.push({ work, message: (err as Error).message, afterRuns: h.count(id) });
        // A hook that throws is logged and changes nothing for the queue.
        if (work.kind === 'job') throw new Error('hook failed too');
      },
    });
    await queue.enqueueDelivery({ jobId: 'bad', round: 0, attempt: 1 });
    await queue.scheduleJob('bad-job', 0);
    await queue.enqueueDelivery({ jobId: 'good', round: 0, attempt: 1 });
    await waitUntil(() => given.length === 2, 'both to be given up', 5000);
    expect(given).toContainEqual({
      work: { kind: 'delivery', task: { jobId: 'bad', round: 0, attempt: 1 } },
      message: 'boom bad/0/1',
      afterRuns: runs,
    });
    expect(given).toContainEqual({ work: { kind: 'job', jobId: 'bad-job' }, message: 'boom bad-job', afterRuns: runs });
    expect(logger.lines.some((l) => l.level === 'error' && (l.obj as { err?: Error }).err?.message === 'hook failed too')).toBe(true);
    await queue.scheduleJob('after', 0);
    await waitUntil(() => h.count('after') === 1, 'work after the hook failed');
    await sleep(50);
    expect(given).toHaveLength(2); // never for work that succeeded
    expect(h.count('bad/0/1')).toBe(runs);
  });

  it('close() waits for a running abandoned hook', async () => {
    const queue = await newQueue();
    const h = createHarness(() => {
      throw new Error('boom');
    });
    let started = false;
    let finished = false;
    await queue.start({
      ...h.handlers,
      async abandoned() {
        started = true;
        await sleep(150);
        finished = true;
      },
    });
    await queue.enqueueDelivery({ jobId: 'x', round: 0, attempt: 1 });
    await waitUntil(() => started, 'the hook to start');
    await queue.close();
    expect(finished).toBe(true);
  });

  it('close() waits for a running handler, then runs nothing more', async () => {
    const queue = await newQueue();
    const h = createHarness(async (_kind, id) => {
      if (id === 'slow/0/1') await sleep(200);
    });
    await queue.start(h.handlers);
    await queue.enqueueDelivery({ jobId: 'slow', round: 0, attempt: 1 });
    await queue.enqueueDelivery({ jobId: 'later', round: 0, attempt: 1 }, 300);
    await queue.scheduleJob('later-job', 300);
    await waitUntil(() => h.count('slow/0/1') === 1, 'the slow delivery to start');
    await queue.close();
    const slow = h.deliveryRuns.find((r) => r.id === 'slow/0/1');
    expect(slow?.finishedAt).toBeDefined();
    await sleep(450);
    expect(h.deliveryRuns.map((r) => r.id)).toEqual(['slow/0/1']);
    expect(h.jobRuns).toEqual([]);
  });

  it('counts() tells waiting, delayed and running work of each kind', async () => {
    const queue = await newQueue();
    expect(await queue.counts()).toEqual({ jobs: 0, deliveries: 0 });
    const hold = gate();
    const h = createHarness(async (_kind, id) => {
      if (id === 'run/0/1') await hold.promise;
    });
    await queue.scheduleJob('a', 0);
    await queue.scheduleJob('b', 60_000);
    await queue.enqueueDelivery({ jobId: 'run', round: 0, attempt: 1 });
    await queue.enqueueDelivery({ jobId: 'x', round: 0, attempt: 1 }, 60_000);
    expect(await queue.counts()).toEqual({ jobs: 2, deliveries: 2 });
    await queue.start(h.handlers);
    await waitUntil(() => h.count('run/0/1') === 1 && h.count('a') === 1, 'the due work to start');
    await waitUntil(async () => (await queue.counts()).jobs === 1, 'job a to finish');
    // One delivery running, one delayed.
    expect(await queue.counts()).toEqual({ jobs: 1, deliveries: 2 });
    hold.open();
    await waitUntil(async () => (await queue.counts()).deliveries === 1, 'the running delivery to finish');
  });

  it('refuses bad arguments with ERR_OPTION_INVALID', async () => {
    const queue = await newQueue();
    await expect(queue.scheduleJob('', 0)).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(queue.scheduleJob('j', -1)).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(queue.enqueueDelivery({ jobId: 'j', round: 0, attempt: 0 })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(queue.enqueueDelivery({ jobId: 'j', round: -1, attempt: 1 })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(queue.enqueueDelivery({ jobId: 'j', round: 0, attempt: 1 }, Number.NaN)).rejects.toMatchObject({
      code: 'ERR_OPTION_INVALID',
    });
    expect(await queue.counts()).toEqual({ jobs: 0, deliveries: 0 });
  });
});
