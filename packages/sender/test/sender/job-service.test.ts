// The job service on the real memory store and queue, with a deliverer that records the tasks it
// gets (the HTTP side of delivery is tested in webhook-loop.test.ts).
import { afterEach, describe, expect, test } from 'vitest';
import type { AttemptRecord, DeliveryTask, JobRecord, WorkQueue } from '../../src/index.js';
import { createJobService, createMemoryWorkQueue, simulateResult } from '../../src/index.js';
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

function setup(outcomes: AttemptRecord['outcome'][] = ['delivered']) {
  const jobs = createMemoryJobStore();
  const queue = createMemoryWorkQueue();
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
      if (outcome !== 'retry') await jobs.setDelivery(task.jobId, outcome === 'delivered' ? 'delivered' : outcome);
      return record;
    },
  };
  const service = createJobService({ jobs, queue, deliverer, now: () => new Date('2026-01-01T00:00:02.5Z') });
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
