// What only the memory queue promises: its timers, its FIFO order, unlimited runJob, no-op after close.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryWorkQueue } from '../../src/queue/memory-work-queue.js';
import type { WorkQueue } from '../../src/queue/work-queue.js';
import { createCapturingLogger, createHarness, gate, sleep, waitUntil } from './queue-harness.js';

const open: WorkQueue[] = [];
function newQueue(...args: Parameters<typeof createMemoryWorkQueue>): WorkQueue {
  const queue = createMemoryWorkQueue(...args);
  open.push(queue);
  return queue;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((q) => q.close()));
});

const activeTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('createMemoryWorkQueue', () => {
  it('refuses bad options with ERR_OPTION_INVALID', () => {
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => createMemoryWorkQueue({ concurrency })).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    }
    expect(() => createMemoryWorkQueue({ logger: {} as never })).toThrow(/logger/);
  });

  it('refuses a second start()', async () => {
    const queue = newQueue();
    await queue.start(createHarness().handlers);
    await expect(queue.start(createHarness().handlers)).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
  });

  it('runs waiting deliveries first in, first out', async () => {
    const queue = newQueue({ concurrency: 1 });
    const h = createHarness(() => sleep(2));
    for (let i = 0; i < 5; i++) await queue.enqueueDelivery({ jobId: `f${i}`, round: 0, attempt: 1 });
    // Same due time: enqueue order kept.
    for (let i = 5; i < 10; i++) await queue.enqueueDelivery({ jobId: `f${i}`, round: 0, attempt: 1 }, 20);
    await queue.start(h.handlers);
    await waitUntil(() => h.deliveryRuns.length === 10, 'all deliveries');
    expect(h.deliveryRuns.map((r) => r.id)).toEqual(Array.from({ length: 10 }, (_, i) => `f${i}/0/1`));
  });

  it('does not hold runJob behind busy deliveries', async () => {
    const queue = newQueue({ concurrency: 1 });
    const hold = gate();
    const h = createHarness(async (kind) => {
      if (kind === 'delivery') await hold.promise;
      else await sleep(30);
    });
    await queue.start(h.handlers);
    await queue.enqueueDelivery({ jobId: 'busy', round: 0, attempt: 1 });
    for (let i = 0; i < 5; i++) await queue.scheduleJob(`job${i}`, 0);
    await waitUntil(() => h.jobRuns.filter((r) => r.finishedAt !== undefined).length === 5, 'the jobs');
    // All five ran side by side, while the only delivery slot was taken.
    const firstEnd = Math.min(...h.jobRuns.map((r) => r.finishedAt ?? Infinity));
    expect(h.jobRuns.every((r) => r.startedAt < firstEnd)).toBe(true);
    hold.open();
  });

  it('survives a handler that throws synchronously', async () => {
    const logger = createCapturingLogger();
    const queue = newQueue({ logger });
    let calls = 0;
    await queue.start({
      runJob: () => {
        throw new Error('sync boom');
      },
      deliver: (() => {
        calls++;
        throw new Error('sync boom');
      }) as never,
    });
    await queue.scheduleJob('j', 0);
    await queue.enqueueDelivery({ jobId: 'j', round: 0, attempt: 1 });
    await queue.enqueueDelivery({ jobId: 'j', round: 0, attempt: 2 });
    await waitUntil(() => calls === 2 && logger.lines.length === 3, 'both failures logged');
    expect(await queue.counts()).toEqual({ jobs: 0, deliveries: 0 });
  });

  it('keeps 100,000 delayed deliveries under ONE timer, and close() clears it', async () => {
    const before = activeTimers();
    const queue = newQueue();
    await queue.start(createHarness().handlers);
    for (let i = 0; i < 100_000; i++) await queue.enqueueDelivery({ jobId: `m${i}`, round: 0, attempt: 1 }, 60_000 + (i % 1000));
    expect(await queue.counts()).toEqual({ jobs: 0, deliveries: 100_000 });
    expect(activeTimers() - before).toBe(1);
    await queue.close();
    expect(activeTimers()).toBe(before);
    expect(await queue.counts()).toEqual({ jobs: 0, deliveries: 0 });
  });

  it('does not fire a delay beyond setTimeout range early', async () => {
    const queue = newQueue();
    const h = createHarness();
    await queue.start(h.handlers);
    await queue.enqueueDelivery({ jobId: 'far', round: 0, attempt: 1 }, 2 ** 31 + 10);
    await sleep(50);
    expect(h.deliveryRuns).toEqual([]);
  });

  it('re-arms its timer for an earlier entry added after a later one', async () => {
    const queue = newQueue();
    const h = createHarness();
    await queue.start(h.handlers);
    const t0 = performance.now();
    await queue.enqueueDelivery({ jobId: 'late', round: 0, attempt: 1 }, 5000);
    await queue.enqueueDelivery({ jobId: 'early', round: 0, attempt: 1 }, 30);
    await waitUntil(() => h.deliveryRuns.length === 1, 'the early delivery', 1000);
    expect(h.deliveryRuns[0]?.id).toBe('early/0/1');
    expect((h.deliveryRuns[0]?.startedAt ?? 0) - t0).toBeGreaterThanOrEqual(30);
  });

  it('ignores work enqueued after close(), so a handler finishing during close does not fail', async () => {
    const queue = newQueue();
    const h = createHarness();
    let enqueuedDuringClose: Promise<void> | undefined;
    await queue.start({
      runJob: h.handlers.runJob,
      deliver: async (task) => {
        await sleep(50);
        enqueuedDuringClose = queue.enqueueDelivery({ ...task, attempt: task.attempt + 1 }, 0);
        return h.handlers.deliver(task);
      },
    });
    await queue.enqueueDelivery({ jobId: 'r', round: 0, attempt: 1 });
    await sleep(10);
    await queue.close();
    await expect(enqueuedDuringClose).resolves.toBeUndefined();
    await queue.scheduleJob('after', 0);
    await sleep(20);
    expect(h.deliveryRuns.map((r) => r.id)).toEqual(['r/0/1']);
    expect(h.jobRuns).toEqual([]);
    expect(await queue.counts()).toEqual({ jobs: 0, deliveries: 0 });
  });
});
