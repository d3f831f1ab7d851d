// What only the BullMQ queue promises: fail-fast start-up, its job ids in Redis, handler retries,
// and work that outlives the queue object that enqueued it.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, redisCommand, startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import { createBullmqWorkQueue, type BullmqWorkQueueOptions } from '../../src/queue/bullmq-work-queue.js';
import type { WorkQueue } from '../../src/queue/work-queue.js';
import { createCapturingLogger, createHarness, sleep, waitUntil } from './queue-harness.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.dispose();
});

const open: WorkQueue[] = [];
const newPrefix = (): string => `jobhook-test-${randomUUID().slice(0, 8)}`;
async function newQueue(options: Partial<BullmqWorkQueueOptions> = {}): Promise<WorkQueue> {
  const queue = await createBullmqWorkQueue({ connection: server.url, prefix: newPrefix(), ...options });
  open.push(queue);
  return queue;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((q) => q.close()));
});

describe('createBullmqWorkQueue', () => {
  it('fails fast with ERR_STORE_UNAVAILABLE when Redis cannot be reached', async () => {
    const port = await freePort();
    const t0 = performance.now();
    const error = await createBullmqWorkQueue({ connection: `redis://127.0.0.1:${port}` }).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    expect(String((error as Error).message)).toContain(`127.0.0.1:${port}`);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('refuses a URL that is not redis:// and bad options with ERR_OPTION_INVALID', async () => {
    await expect(createBullmqWorkQueue({ connection: 'http://127.0.0.1:6379' })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createBullmqWorkQueue({ connection: 'not a url' })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createBullmqWorkQueue({ connection: server.url, concurrency: 0 })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createBullmqWorkQueue({ connection: server.url, prefix: 'a:b' })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
  });

  it('stores work under deterministic ids job-{jobId} and delivery-{jobId}-{round}-{attempt}', async () => {
    const prefix = newPrefix();
    const queue = await newQueue({ prefix });
    const jobId = randomUUID();
    await queue.scheduleJob(jobId, 60_000);
    await queue.enqueueDelivery({ jobId, round: 2, attempt: 3 }, 60_000);
    expect(await redisCommand(server.port, ['EXISTS', `${prefix}:sender-jobs:job-${jobId}`])).toBe(1);
    expect(await redisCommand(server.port, ['EXISTS', `${prefix}:sender-deliveries:delivery-${jobId}-2-3`])).toBe(1);
    await expect(queue.enqueueDelivery({ jobId: 'a:b', round: 0, attempt: 1 })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
  });

  it('runs a throwing handler again after a short backoff, and logs each failure', async () => {
    const logger = createCapturingLogger();
    const queue = await newQueue({ logger });
    let failures = 0;
    const h = createHarness((_kind, id) => {
      if (id === 'flaky/0/1' && failures < 2) {
        failures++;
        throw new Error('flaky');
      }
    });
    let abandoned = 0;
    await queue.start({
      ...h.handlers,
      async abandoned() {
        abandoned++;
      },
    });
    await queue.enqueueDelivery({ jobId: 'flaky', round: 0, attempt: 1 });
    await waitUntil(() => h.count('flaky/0/1') === 3, 'the third run', 5000);
    const runs = h.deliveryRuns.map((r) => r.startedAt);
    // Backoff 200 ms, then 400 ms.
    expect((runs[1] ?? 0) - (runs[0] ?? 0)).toBeGreaterThanOrEqual(190);
    expect((runs[2] ?? 0) - (runs[1] ?? 0)).toBeGreaterThanOrEqual(390);
    expect(logger.lines.filter((l) => l.level === 'error')).toHaveLength(2);
    await waitUntil(async () => (await queue.counts()).deliveries === 0, 'the queue to drain');
    expect(abandoned).toBe(0); // it succeeded on its third run: not given up
  });

  it('keeps queued work in Redis across close(): a new queue on the same prefix runs it once', async () => {
    const prefix = newPrefix();
    const first = await createBullmqWorkQueue({ connection: server.url, prefix });
    await first.enqueueDelivery({ jobId: 'kept', round: 0, attempt: 1 });
    await first.enqueueDelivery({ jobId: 'kept', round: 0, attempt: 2 }, 100);
    await first.scheduleJob('kept-job', 0);
    await first.close();
    await expect(first.enqueueDelivery({ jobId: 'x', round: 0, attempt: 1 })).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    const second = await newQueue({ prefix });
    expect(await second.counts()).toEqual({ jobs: 1, deliveries: 2 });
    const h = createHarness();
    await second.start(h.handlers);
    await waitUntil(() => h.deliveryRuns.length === 2 && h.jobRuns.length === 1, 'the kept work');
    await sleep(100);
    expect(h.deliveryRuns.map((r) => r.id)).toEqual(['kept/0/1', 'kept/0/2']);
    expect(h.jobRuns.map((r) => r.id)).toEqual(['kept-job']);
  });

  it('shares work between two queues on one prefix: each delivery runs once', async () => {
    const prefix = newPrefix();
    const a = await newQueue({ prefix, concurrency: 4 });
    const b = await newQueue({ prefix, concurrency: 4 });
    const ha = createHarness(() => sleep(5));
    const hb = createHarness(() => sleep(5));
    await a.start(ha.handlers);
    await b.start(hb.handlers);
    // Both enqueue the same 60 deliveries, racing: still one run each.
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => [
        a.enqueueDelivery({ jobId: `s${i}`, round: 0, attempt: 1 }),
        b.enqueueDelivery({ jobId: `s${i}`, round: 0, attempt: 1 }),
      ]).flat(),
    );
    await waitUntil(() => ha.deliveryRuns.length + hb.deliveryRuns.length >= 60, 'all deliveries');
    await sleep(100);
    const all = [...ha.deliveryRuns, ...hb.deliveryRuns].map((r) => r.id).sort();
    expect(all).toEqual(Array.from({ length: 60 }, (_, i) => `s${i}/0/1`).sort());
    expect(ha.deliveryRuns.length).toBeGreaterThan(0);
    expect(hb.deliveryRuns.length).toBeGreaterThan(0);
  });
});

describe('createBullmqWorkQueue when Redis goes away', () => {
  it('fails an enqueue quickly with ERR_STORE_UNAVAILABLE, then runs work again once Redis is back', async () => {
    const own = await startRedisServer({ own: true });
    const queue = await createBullmqWorkQueue({ connection: own.url, prefix: newPrefix() });
    try {
      const h = createHarness();
      await queue.start(h.handlers);
      await own.stop();
      const t0 = performance.now();
      await expect(queue.enqueueDelivery({ jobId: 'down', round: 0, attempt: 1 })).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
      expect(performance.now() - t0).toBeLessThan(5000);
      await own.restart();
      await waitUntil(
        () =>
          queue.enqueueDelivery({ jobId: 'up', round: 0, attempt: 1 }).then(
            () => true,
            () => false,
          ),
        'an enqueue to succeed again',
      );
      await waitUntil(() => h.count('up/0/1') === 1, 'the worker to run work again', 8000);
    } finally {
      await queue.close();
      await own.dispose();
    }
  });
});
