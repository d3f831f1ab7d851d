// The job service on the real memory store and queue, with a deliverer that records the tasks it
// gets (the HTTP side of delivery is tested in webhook-loop.test.ts).
import { afterEach, describe, expect, test } from 'vitest';
import { createMemoryWorkQueue, type AttemptRecord, type DeliveryTask, type WorkQueue } from '@jobhook/delivery';
import type { JobRecord, JobStore } from '../../src/jobs/job-record.js';
import { createJobService, type JobServiceOptions } from '../../src/jobs/job-service.js';
import { simulateResult } from '../../src/jobs/simulate-provider.js';
import { createMemoryJobStore } from '../../src/jobs/memory-job-store.js';
import { waitFor } from './sender-fixtures.js';

const queues: WorkQueue[] = [];
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
});

function job(over: Partial<JobRecord> = {}): JobRecord {
  return {
    jobId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    organizationId: 'acme',
    keyId: null,
    feature: 'ocr',
    subfeature: 'ocr_async',
    provider: 'google',
    model: null,
    status: 'processing',
    createdAt: '2026-01-01T00:00:00.000+00:00',
    finishedAt: null,
    inputJson: '{"file":"x"}',
    webhookReceiver: 'https://hooks.example.com/x',
    userParametersJson: null,
    showOriginalResponse: false,
    simulate: {},
    outputJson: null,
    error: null,
    originalResponseJson: null,
    cost: null,
    delivery: 'pending',
    deliveryRound: 0,
    ...over,
  };
}

function setup(
  outcomes: AttemptRecord['outcome'][] = ['delivered'],
  jobs: JobStore = createMemoryJobStore(),
  queue: WorkQueue = createMemoryWorkQueue(),
  // No redeliver cooldown unless a test is about it: these tests redeliver in quick succession.
  options: Partial<JobServiceOptions> = { redeliverCooldownMs: 0 },
) {
  queues.push(queue);
  const tasks: DeliveryTask[] = [];
  const deliverer = {
    async attempt(task: DeliveryTask): Promise<AttemptRecord> {
      tasks.push(task);
      const outcome = outcomes[Math.min(tasks.length - 1, outcomes.length - 1)]!;
      const record: AttemptRecord = {
        ...task,
        startedAt: '2026-01-01T00:00:01.000+00:00',
        durationMs: 1,
        url: 'https://hooks.example.com/x',
        address: '93.184.216.34',
        statusCode: outcome === 'delivered' ? 200 : 503,
        error: null,
        errorMessage: null,
        outcome,
        nextDelayMs: outcome === 'retry' ? 5 : null,
      };
      await jobs.appendAttempt(task.jobId, record);
      if (outcome !== 'retry') await jobs.endRound(task.jobId, task.round, outcome);
      return record;
    },
  };
  const service = createJobService({ jobs, queue, deliverer, now: () => new Date('2026-01-01T00:00:02.5Z'), ...options });
  return { jobs, queue, service, tasks };
}

describe('createJobService', () => {
  test('runJob finishes once, queues round 0 attempt 1, and retries on "retry"', async () => {
    const { jobs, queue, service, tasks } = setup(['retry', 'retry', 'delivered']);
    await queue.start(service.handlers);
    await service.submit(job(), 0);
    await waitFor(() => tasks.length === 3, 'three attempts');
    expect(tasks).toEqual([1, 2, 3].map((attempt) => ({ jobId: job().jobId, round: 0, attempt })));
    const final = await jobs.get(job().jobId);
    expect(final).toMatchObject({ status: 'success', finishedAt: '2026-01-01T00:00:02.500+00:00', cost: '0.03', delivery: 'delivered' });
    // A second run of a final job changes nothing and sends nothing.
    await service.handlers.runJob(job().jobId);
    expect(tasks).toHaveLength(3);
    expect(await jobs.get(job().jobId)).toEqual(final);
  });

  test('a final job whose webhook was never queued (runner died) is queued when run again', async () => {
    const { jobs, queue, service, tasks } = setup();
    const finished = { ...job(), ...simulateResult(job(), new Date()) };
    await jobs.create(finished);
    await queue.start(service.handlers);
    await service.handlers.runJob(finished.jobId);
    await waitFor(() => tasks.length === 1, 'the recovered delivery');
    expect(tasks[0]).toEqual({ jobId: finished.jobId, round: 0, attempt: 1 });
  });

  test('redeliver: refused while processing, pending, or without receiver; else round + 1', async () => {
    const { jobs, queue, service, tasks } = setup();
    await queue.start(service.handlers);
    expect(await service.redeliver(job())).toEqual({ ok: false, reason: 'processing' });
    const final = { ...job(), ...simulateResult(job(), new Date()) };
    expect(await service.redeliver(final)).toEqual({ ok: false, reason: 'pending' });
    expect(await service.redeliver({ ...final, webhookReceiver: null, delivery: null })).toEqual({ ok: false, reason: 'no_receiver' });
    await jobs.create({ ...final, delivery: 'failed', deliveryRound: 2 });
    expect(await service.redeliver({ ...final, delivery: 'failed', deliveryRound: 2 })).toEqual({ ok: true, round: 3 });
    await waitFor(() => tasks.length === 1, 'the redelivery');
    expect(tasks[0]).toEqual({ jobId: final.jobId, round: 3, attempt: 1 });
  });

  test('redeliver cooldown: refused with the time left until redeliverCooldownMs after the last redeliver, on an injected clock', async () => {
    let clock = Date.parse('2026-01-01T00:00:10Z');
    const jobs = createMemoryJobStore();
    const { queue, service, tasks } = setup(['delivered'], jobs, createMemoryWorkQueue(), {
      now: () => new Date(clock),
      redeliverCooldownMs: 10_000,
    });
    await queue.start(service.handlers);
    await jobs.create({ ...job(), ...simulateResult(job(), new Date(clock)), delivery: 'delivered' });
    const fresh = async () => (await jobs.get(job().jobId))!;

    // Round 0 is no redeliver: the first redeliver is not held back.
    expect(await service.redeliver(await fresh())).toEqual({ ok: true, round: 1 });
    expect(await fresh()).toMatchObject({ deliveryRound: 1, redeliveredAt: '2026-01-01T00:00:10.000+00:00' });
    await waitFor(async () => (await fresh()).delivery === 'delivered', 'round 1 delivered');
    expect(await service.redeliver(await fresh())).toEqual({ ok: false, reason: 'cooldown', retryAfterMs: 10_000 });
    clock += 9_999;
    expect(await service.redeliver(await fresh())).toEqual({ ok: false, reason: 'cooldown', retryAfterMs: 1 });
    clock += 1;
    expect(await service.redeliver(await fresh())).toEqual({ ok: true, round: 2 });
    expect((await fresh()).redeliveredAt).toBe('2026-01-01T00:00:20.000+00:00');
    await waitFor(() => tasks.length === 2, 'round 2');
    expect(tasks.map((t) => t.round)).toEqual([1, 2]);
  });

  test('redeliver cooldown: a stamp ahead of this clock (another process) holds at most one cooldown; a clock jump beyond does not block', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const jobs = createMemoryJobStore();
    const { queue, service } = setup(['delivered'], jobs, createMemoryWorkQueue(), {
      now: () => new Date(clock),
      redeliverCooldownMs: 10_000,
    });
    await queue.start(service.handlers);
    const final = { ...job(), ...simulateResult(job(), new Date(clock)), delivery: 'delivered' as const, deliveryRound: 1 };
    await jobs.create({ ...final, redeliveredAt: '2026-01-01T00:00:03.000+00:00' });
    expect(await service.redeliver((await jobs.get(final.jobId))!)).toEqual({ ok: false, reason: 'cooldown', retryAfterMs: 10_000 });
    clock = Date.parse('2025-12-31T00:00:00Z'); // a day behind the stamp
    expect(await service.redeliver((await jobs.get(final.jobId))!)).toEqual({ ok: true, round: 2 });
  });

  test('redeliver limit: after maxRedeliveries rounds, refused for good (cooldown or not)', async () => {
    const jobs = createMemoryJobStore();
    const { queue, service, tasks } = setup(['delivered'], jobs, createMemoryWorkQueue(), { redeliverCooldownMs: 0, maxRedeliveries: 2 });
    await queue.start(service.handlers);
    await jobs.create({ ...job(), ...simulateResult(job(), new Date()), delivery: 'failed' });
    for (const round of [1, 2]) {
      expect(await service.redeliver((await jobs.get(job().jobId))!)).toEqual({ ok: true, round });
      await waitFor(async () => (await jobs.get(job().jobId))?.delivery === 'delivered', `round ${round} delivered`);
    }
    expect(await service.redeliver((await jobs.get(job().jobId))!)).toEqual({ ok: false, reason: 'limit' });
    expect(await jobs.get(job().jobId)).toMatchObject({ delivery: 'delivered', deliveryRound: 2 });
    expect(tasks.map((t) => t.round)).toEqual([1, 2]);
    // 0 turns redelivery off.
    const off = setup(['delivered'], createMemoryJobStore(), createMemoryWorkQueue(), { maxRedeliveries: 0 });
    expect(await off.service.redeliver({ ...job(), ...simulateResult(job(), new Date()), delivery: 'failed' })).toEqual({
      ok: false,
      reason: 'limit',
    });
  });

  test('createJobService refuses a bad redeliverCooldownMs or maxRedeliveries', () => {
    const base = {
      jobs: createMemoryJobStore(),
      queue: createMemoryWorkQueue(),
      deliverer: { attempt: async () => ({}) as AttemptRecord },
    };
    expect(() => createJobService({ ...base, redeliverCooldownMs: -1 })).toThrow('redeliverCooldownMs must be a non-negative integer');
    expect(() => createJobService({ ...base, maxRedeliveries: 1.5 })).toThrow('maxRedeliveries must be a non-negative integer');
  });

  test('a stale redeliver cannot start a round again: concurrent calls, one round each', async () => {
    const { jobs, queue, service, tasks } = setup();
    await queue.start(service.handlers);
    const final = { ...job(), ...simulateResult(job(), new Date()), delivery: 'delivered' as const };
    await jobs.create(final);
    const answers = await Promise.all(Array.from({ length: 5 }, () => service.redeliver(final)));
    expect(answers.filter((a) => a.ok)).toEqual([{ ok: true, round: 1 }]);
    expect(answers.filter((a) => !a.ok)).toEqual(Array.from({ length: 4 }, () => ({ ok: false, reason: 'pending' })));
    await waitFor(async () => (await jobs.get(final.jobId))?.delivery === 'delivered', 'round 1 delivered');
    // A call that read the job before round 1 (round 0, delivered) arrives now: refused, nothing reverted.
    expect(await service.redeliver(final)).toEqual({ ok: false, reason: 'pending' });
    expect(await jobs.get(final.jobId)).toMatchObject({ delivery: 'delivered', deliveryRound: 1 });
    expect(tasks).toEqual([{ jobId: final.jobId, round: 1, attempt: 1 }]);
    expect(await service.redeliver((await jobs.get(final.jobId))!)).toEqual({ ok: true, round: 2 });
  });

  test('abandoned: a job whose runner always throws ends fail (internal_error), charged, and its webhook is sent', async () => {
    const { jobs, queue, service, tasks } = setup();
    await queue.start({
      ...service.handlers,
      runJob: async () => {
        throw new Error('store down');
      },
    });
    await service.submit(job(), 0);
    await waitFor(() => tasks.length === 1, 'the webhook of the failed job');
    expect(await jobs.get(job().jobId)).toMatchObject({
      status: 'fail',
      finishedAt: '2026-01-01T00:00:02.500+00:00',
      outputJson: null,
      error: { message: 'internal error', error_code: 'internal_error' },
      cost: '0.03',
      delivery: 'delivered',
      deliveryRound: 0,
    });
    expect(tasks[0]).toEqual({ jobId: job().jobId, round: 0, attempt: 1 });
  });

  test('abandoned: a delivery whose handler always throws ends failed with an internal_error record; redeliver works', async () => {
    const { jobs, queue, service } = setup();
    let down = true;
    await queue.start({
      ...service.handlers,
      deliver: async (task) => {
        if (down) throw new Error('store down');
        return service.handlers.deliver(task);
      },
    });
    await service.submit(job(), 0);
    await waitFor(async () => (await jobs.get(job().jobId))?.delivery === 'failed', 'the delivery to end failed');
    expect(await jobs.listAttempts(job().jobId)).toEqual([
      expect.objectContaining({
        round: 0,
        attempt: 1,
        outcome: 'failed',
        error: 'internal_error',
        url: 'https://hooks.example.com/x',
        statusCode: null,
      }),
    ]);
    down = false;
    const now = (await jobs.get(job().jobId))!;
    expect(await service.redeliver(now)).toEqual({ ok: true, round: 1 });
    await waitFor(async () => (await jobs.get(job().jobId))?.delivery === 'delivered', 'round 1 delivered');
  });

  test('a store whose appendAttempt fails: the delivery ends failed, not pending', async () => {
    const real = createMemoryJobStore();
    const jobs: JobStore = {
      ...real,
      appendAttempt: async () => {
        throw new Error('store down');
      },
    };
    const { queue, service, tasks } = setup(['delivered'], jobs);
    await queue.start(service.handlers);
    await service.submit(job(), 0);
    await waitFor(async () => (await real.get(job().jobId))?.delivery !== 'pending', 'the delivery to end');
    expect(tasks).toHaveLength(1);
    expect(await real.get(job().jobId)).toMatchObject({ status: 'success', delivery: 'failed', deliveryRound: 0 });
    expect(await real.listAttempts(job().jobId)).toEqual([]); // the log was down for the note too: best effort
  });

  test('submit: a failed schedule throws, and the job ends fail (internal_error, no cost) with no webhook', async () => {
    const inner = createMemoryWorkQueue();
    const queue: WorkQueue = {
      ...inner,
      scheduleJob: async () => {
        throw new Error('queue down');
      },
    };
    const { jobs, service, tasks } = setup(['delivered'], createMemoryJobStore(), queue);
    queues.push(inner);
    await queue.start(service.handlers);
    await expect(service.submit(job(), 0)).rejects.toThrow('queue down');
    expect(await jobs.get(job().jobId)).toMatchObject({
      status: 'fail',
      error: { message: 'internal error', error_code: 'internal_error' },
      cost: null,
      delivery: 'failed',
    });
    // Had the schedule reached the queue after all, its run would send nothing.
    await service.handlers.runJob(job().jobId);
    expect(tasks).toEqual([]);
  });

  test('redeliver: a failed enqueue throws and ends the new round failed, so a later redeliver works', async () => {
    const inner = createMemoryWorkQueue();
    let down = true;
    const queue: WorkQueue = {
      ...inner,
      enqueueDelivery: async (task, delayMs) => {
        if (down) throw new Error('queue down');
        return inner.enqueueDelivery(task, delayMs);
      },
    };
    const { jobs, service, tasks } = setup(['delivered'], createMemoryJobStore(), queue);
    queues.push(inner);
    await queue.start(service.handlers);
    const final = { ...job(), ...simulateResult(job(), new Date()), delivery: 'rejected' as const };
    await jobs.create(final);
    await expect(service.redeliver(final)).rejects.toThrow('queue down');
    expect(await jobs.get(final.jobId)).toMatchObject({ delivery: 'failed', deliveryRound: 1 });
    down = false;
    expect(await service.redeliver((await jobs.get(final.jobId))!)).toEqual({ ok: true, round: 2 });
    await waitFor(() => tasks.length === 1, 'round 2');
  });

  test('simulateResult is deterministic in the input, not the job id', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const a = simulateResult(job(), at);
    const b = simulateResult(job({ jobId: '7c9e6679-7425-40de-944b-e07fc1f90ae7' }), at);
    const c = simulateResult(job({ inputJson: '{"file":"y"}' }), at);
    expect(a.outputJson).toBe(b.outputJson);
    expect(a.outputJson).not.toBe(c.outputJson);
    expect(simulateResult(job({ simulate: { outcome: 'fail' } }), at)).toMatchObject({
      status: 'fail',
      outputJson: null,
      error: { error_code: 'provider_error' },
    });
  });
});
