// The job service end to end with the real deliverer and a plain HTTP receiver: redeliver races on
// the memory stack and on Redis + BullMQ (a real redis-server), and work BullMQ gives up on after its
// handler retries (a store outage) ending in a final state instead of `pending` / `processing`.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createTestKeyPair } from '@jobhook/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import {
  createBullmqWorkQueue,
  createDeliverer,
  createMemoryWorkQueue,
  createRetryPolicy,
  createSsrfGuard,
  type WorkHandlers,
  type WorkQueue,
} from '@jobhook/delivery';
import type { JobRecord, JobStore } from '../../src/jobs/job-record.js';
import { createJobService } from '../../src/jobs/job-service.js';
import { createRedisJobStore } from '../../src/jobs/redis-job-store.js';
import { buildWebhookPayload } from '../../src/jobs/webhook-payload.js';
import { createMemoryJobStore } from '../../src/jobs/memory-job-store.js';
import { buildJob } from '../jobs/job-fixtures.js';
import { waitFor } from './sender-fixtures.js';

let redis: RedisServer;
let receiver: Server;
let receiverUrl: string;
const hits: string[] = []; // job id of each webhook request received

beforeAll(async () => {
  redis = await startRedisServer();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { job_id: string }).job_id);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  receiverUrl = `http://127.0.0.1:${address.port}/hook`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  await redis?.dispose();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

const hitsOf = (jobId: string): number => hits.filter((id) => id === jobId).length;

/** A job to run: the store tests' record, with this file's receiver and no simulate overrides. */
function newJob(): JobRecord {
  return buildJob({
    feature: 'text',
    keyId: null,
    webhookReceiver: receiverUrl,
    userParametersJson: null,
    showOriginalResponse: false,
    simulate: {},
  });
}

interface Stack {
  jobs: JobStore;
  queue: WorkQueue;
}

const stacks: { name: string; make: () => Promise<Stack> }[] = [
  { name: 'memory', make: async () => ({ jobs: createMemoryJobStore(), queue: createMemoryWorkQueue() }) },
  {
    name: 'redis + bullmq',
    make: async () => {
      const prefix = `t${randomUUID().slice(0, 8)}`;
      return {
        jobs: await createRedisJobStore({ redis: redis.url, prefix: `${prefix}:sender:` }),
        queue: await createBullmqWorkQueue({ connection: redis.url, prefix }),
      };
    },
  },
];

/** A started job service on `jobs` and `queue`, closed after the test. `wrap` may replace handlers. */
async function startService({ jobs, queue }: Stack, wrap: (h: WorkHandlers) => WorkHandlers = (h) => h) {
  cleanups.push(() => jobs.close());
  cleanups.push(() => queue.close());
  const deliverer = createDeliverer({
    jobs,
    payload: buildWebhookPayload,
    privateKey: createTestKeyPair().privateKey,
    policy: createRetryPolicy({ baseMs: 10, capMs: 50 }),
    guard: createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] }),
    attemptTimeoutMs: 1000,
  });
  // No redeliver cooldown: these races redeliver in quick succession (the cooldown is job-service.test.ts's).
  const service = createJobService({ jobs, queue, deliverer, redeliverCooldownMs: 0 });
  await queue.start(wrap(service.handlers));
  return service;
}

describe.each(stacks)('redeliver races: $name', ({ make }) => {
  test('concurrent redelivers start one round; a stale one after it finished is refused and reverts nothing', async () => {
    const stack = await make();
    const service = await startService(stack);
    const { jobs } = stack;
    const job = newJob();
    await service.submit(job, 0);
    await waitFor(async () => (await jobs.get(job.jobId))?.delivery === 'delivered', 'round 0 delivered');
    const stale = (await jobs.get(job.jobId))!; // what a request that reads now and acts late holds

    const answers = await Promise.all(Array.from({ length: 6 }, () => service.redeliver(stale)));
    expect(answers.filter((a) => a.ok)).toEqual([{ ok: true, round: 1 }]);
    await waitFor(async () => (await jobs.get(job.jobId))?.delivery === 'delivered', 'round 1 delivered');

    expect(await service.redeliver(stale)).toEqual({ ok: false, reason: 'pending' });
    expect(await jobs.get(job.jobId)).toMatchObject({ delivery: 'delivered', deliveryRound: 1 });
    expect((await jobs.listAttempts(job.jobId)).map((a) => [a.round, a.attempt, a.outcome])).toEqual([
      [0, 1, 'delivered'],
      [1, 1, 'delivered'],
    ]);
    expect(hitsOf(job.jobId)).toBe(2);
    // Not stuck: the next redeliver, on a fresh read, is round 2.
    expect(await service.redeliver((await jobs.get(job.jobId))!)).toEqual({ ok: true, round: 2 });
    await waitFor(() => hitsOf(job.jobId) === 3, 'round 2 sent');
  });
});

describe('work BullMQ gives up on (redis + bullmq)', () => {
  test('a delivery log down through every handler retry: the delivery ends failed, redeliver works after', async () => {
    const stack = await stacks[1]!.make();
    const real = stack.jobs;
    let down = true;
    const jobs: JobStore = {
      ...real,
      async appendAttempt(jobId, attempt) {
        if (down) throw new Error('simulated Redis outage');
        return real.appendAttempt(jobId, attempt);
      },
    };
    const service = await startService({ jobs, queue: stack.queue });
    const job = newJob();
    await service.submit(job, 0);
    // 3 handler runs (0, +200, +400 ms), each POSTing and failing to record its attempt, then given up.
    await waitFor(async () => (await real.get(job.jobId))?.delivery !== 'pending', 'the delivery to end');
    expect(await real.get(job.jobId)).toMatchObject({ status: 'success', delivery: 'failed', deliveryRound: 0 });
    expect(hitsOf(job.jobId)).toBe(3);
    expect(await stack.queue.counts()).toEqual({ jobs: 0, deliveries: 0 });

    down = false;
    expect(await service.redeliver((await real.get(job.jobId))!)).toEqual({ ok: true, round: 1 });
    await waitFor(async () => (await real.get(job.jobId))?.delivery === 'delivered', 'round 1 delivered');
    expect((await real.listAttempts(job.jobId)).map((a) => [a.round, a.attempt, a.outcome])).toEqual([[1, 1, 'delivered']]);
  });

  test('a runner that always throws: the job ends fail (internal_error), visible in the store, and its webhook is sent', async () => {
    const stack = await stacks[1]!.make();
    const service = await startService(stack, (h) => ({
      ...h,
      runJob: async () => {
        throw new Error('simulated Redis outage');
      },
    }));
    const job = newJob();
    await service.submit(job, 0);
    await waitFor(async () => (await stack.jobs.get(job.jobId))?.delivery === 'delivered', 'the failed job delivered');
    expect(await stack.jobs.get(job.jobId)).toMatchObject({
      status: 'fail',
      error: { message: 'internal error', error_code: 'internal_error' },
      cost: '0.01',
      outputJson: null,
    });
    expect(hitsOf(job.jobId)).toBe(1);
  });
});
