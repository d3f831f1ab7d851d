// One JobStore contract, run against the memory store and the Redis store (with a URL, and with an
// ioredis client passed in) on a real redis-server started for this file, and on a real 3-node
// Redis Cluster (a command spanning two slots would fail there with CROSSSLOT).
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, startRedisServer, type RedisCluster, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { JobStore } from '../../src/jobs/job-record.js';
import { createMemoryJobStore } from '../../src/jobs/memory-job-store.js';
import { createRedisJobStore } from '../../src/jobs/redis-job-store.js';
import { buildAttempt, buildJob, EXACT_INPUT_JSON, EXACT_PARAMS_JSON, failResult, successResult } from './job-fixtures.js';

let server: RedisServer;
let sharedClient: Redis;
let cluster: RedisCluster;
let clusterClient: Cluster;
beforeAll(async () => {
  server = await startRedisServer();
  sharedClient = new Redis(server.url);
  cluster = await startRedisCluster(3);
  clusterClient = new Cluster([...cluster.nodes]);
  await new Promise<void>((resolve, reject) => {
    clusterClient.once('ready', resolve);
    clusterClient.once('error', reject);
  });
});
afterAll(async () => {
  sharedClient?.disconnect();
  clusterClient?.disconnect();
  await cluster?.dispose();
  await server?.dispose();
});

const prefix = (): string => `jobhook-test-${randomUUID().slice(0, 8)}:`;
const kinds: { name: string; make: () => Promise<JobStore> }[] = [
  { name: 'memory', make: async () => createMemoryJobStore() },
  { name: 'redis (URL)', make: () => createRedisJobStore({ redis: server.url, prefix: prefix() }) },
  { name: 'redis (client passed in)', make: () => createRedisJobStore({ redis: sharedClient, prefix: prefix() }) },
  {
    name: 'redis cluster (3 masters, a Cluster client passed in)',
    make: () => createRedisJobStore({ redis: clusterClient, prefix: prefix() }),
  },
];

describe.each(kinds)('JobStore conformance: $name', ({ make }) => {
  let store: JobStore;
  afterEach(async () => {
    await store?.close();
  });

  it('gives back what was created, exact JSON texts and unicode included', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    const read = await store.get(job.jobId);
    expect(read).toEqual(job);
    expect(read?.inputJson).toBe(EXACT_INPUT_JSON);
    expect(read?.userParametersJson).toBe(EXACT_PARAMS_JSON);
    expect(read?.organizationId).toBe('org-\u00e9\u00e8');
  });

  it('hands out copies: changing a returned record changes nothing stored', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    job.status = 'fail';
    const read = await store.get(job.jobId);
    expect(read?.status).toBe('processing');
    if (read) read.simulate.outcome = 'fail';
    expect((await store.get(job.jobId))?.simulate.outcome).toBe('success');
  });

  it('finishes a processing job once and returns the finished record', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    const result = successResult();
    const finished = await store.finish(job.jobId, result);
    expect(finished).toEqual({ ...job, ...result });
    expect(await store.get(job.jobId)).toEqual({ ...job, ...result });
    expect(await store.finish(job.jobId, failResult)).toBeUndefined();
    expect((await store.get(job.jobId))?.status).toBe('success');
  });

  it('lets exactly one of two concurrent finish calls win', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    const [a, b] = await Promise.all([store.finish(job.jobId, successResult()), store.finish(job.jobId, failResult)]);
    expect([a, b].filter((r) => r !== undefined)).toHaveLength(1);
    const winner = a ?? b;
    expect(await store.get(job.jobId)).toEqual(winner);
  });

  it('sets the delivery state, and the round when given', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    await store.finish(job.jobId, failResult);
    await store.setDelivery(job.jobId, 'failed');
    expect(await store.get(job.jobId)).toMatchObject({ status: 'fail', delivery: 'failed', deliveryRound: 0, error: failResult.error });
    await store.setDelivery(job.jobId, 'pending', 1);
    expect(await store.get(job.jobId)).toMatchObject({ delivery: 'pending', deliveryRound: 1 });
    await store.setDelivery(job.jobId, 'delivered');
    expect(await store.get(job.jobId)).toMatchObject({ delivery: 'delivered', deliveryRound: 1, inputJson: EXACT_INPUT_JSON });
  });

  it('startRound starts the next round only on a final job whose delivery is not pending', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    expect(await store.startRound(job.jobId, 1)).toBe(false); // processing
    await store.finish(job.jobId, successResult());
    expect(await store.startRound(job.jobId, 1)).toBe(false); // round 0 still pending
    await store.setDelivery(job.jobId, 'delivered');
    expect(await store.startRound(job.jobId, 2)).toBe(false); // not the next round
    expect(await store.startRound(job.jobId, 0)).toBe(false);
    expect(await store.get(job.jobId)).toMatchObject({ delivery: 'delivered', deliveryRound: 0 });
    expect(await store.startRound(job.jobId, 1)).toBe(true);
    expect(await store.get(job.jobId)).toMatchObject({
      status: 'success',
      delivery: 'pending',
      deliveryRound: 1,
      inputJson: EXACT_INPUT_JSON,
    });
    expect(await store.startRound(job.jobId, 1)).toBe(false); // already started
    const silent = buildJob({ webhookReceiver: null, delivery: null });
    await store.create(silent);
    await store.finish(silent.jobId, failResult);
    expect(await store.startRound(silent.jobId, 1)).toBe(false); // no receiver
    expect(await store.startRound(randomUUID(), 1)).toBe(false); // unknown
  });

  it('startRound writes redeliveredAt with the round, and only when it starts one', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    await store.finish(job.jobId, successResult());
    expect((await store.get(job.jobId))?.redeliveredAt).toBeUndefined(); // round 0 has none
    await store.setDelivery(job.jobId, 'delivered');
    expect(await store.startRound(job.jobId, 1, '2026-01-01T00:00:10.000+00:00')).toBe(true);
    expect(await store.get(job.jobId)).toMatchObject({ deliveryRound: 1, redeliveredAt: '2026-01-01T00:00:10.000+00:00' });
    // Refused (round 1 pending): the stamp stays.
    expect(await store.startRound(job.jobId, 2, '2026-01-01T00:00:11.000+00:00')).toBe(false);
    expect((await store.get(job.jobId))?.redeliveredAt).toBe('2026-01-01T00:00:10.000+00:00');
    await store.endRound(job.jobId, 1, 'delivered');
    // Without a stamp (a caller that does not keep one), the last stays.
    expect(await store.startRound(job.jobId, 2)).toBe(true);
    expect(await store.get(job.jobId)).toMatchObject({ deliveryRound: 2, redeliveredAt: '2026-01-01T00:00:10.000+00:00' });
  });

  it('lets exactly one of concurrent startRound calls for a round win', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    await store.finish(job.jobId, successResult());
    await store.setDelivery(job.jobId, 'failed');
    const started = await Promise.all(Array.from({ length: 8 }, () => store.startRound(job.jobId, 1)));
    expect(started.filter(Boolean)).toHaveLength(1);
    expect(await store.get(job.jobId)).toMatchObject({ delivery: 'pending', deliveryRound: 1 });
  });

  it('endRound ends only the round still pending, with the state given', async () => {
    store = await make();
    const job = buildJob();
    await store.create(job);
    await store.finish(job.jobId, successResult());
    await store.setDelivery(job.jobId, 'pending', 2);
    expect(await store.endRound(job.jobId, 1, 'delivered')).toBe(false); // an older round
    expect(await store.get(job.jobId)).toMatchObject({ delivery: 'pending', deliveryRound: 2 });
    expect(await store.endRound(job.jobId, 2, 'failed')).toBe(true);
    expect(await store.get(job.jobId)).toMatchObject({ delivery: 'failed', deliveryRound: 2, status: 'success' });
    expect(await store.endRound(job.jobId, 2, 'delivered')).toBe(false); // already ended: a late answer changes nothing
    expect((await store.get(job.jobId))?.delivery).toBe('failed');
    await store.setDelivery(job.jobId, 'pending', 3);
    expect(await store.endRound(job.jobId, 3, 'rejected')).toBe(true);
    expect((await store.get(job.jobId))?.delivery).toBe('rejected');
    expect(await store.endRound(randomUUID(), 0, 'failed')).toBe(false);
  });

  it('lists attempts oldest first, per job', async () => {
    store = await make();
    const job = buildJob();
    const other = buildJob();
    await store.create(job);
    await store.create(other);
    const attempts = [buildAttempt(1), buildAttempt(2), buildAttempt(3, { statusCode: 200, outcome: 'delivered', nextDelayMs: null })];
    for (const attempt of attempts) await store.appendAttempt(job.jobId, attempt);
    await store.appendAttempt(
      other.jobId,
      buildAttempt(1, { error: 'timeout', errorMessage: 'no answer in 30 s \u23f1', statusCode: null, address: null }),
    );
    expect(await store.listAttempts(job.jobId)).toEqual(attempts);
    expect(await store.listAttempts(other.jobId)).toEqual([
      buildAttempt(1, { error: 'timeout', errorMessage: 'no answer in 30 s \u23f1', statusCode: null, address: null }),
    ]);
  });

  it('answers an unknown job with undefined / nothing, and does not create it', async () => {
    store = await make();
    const jobId = randomUUID();
    expect(await store.get(jobId)).toBeUndefined();
    expect(await store.finish(jobId, successResult())).toBeUndefined();
    await store.setDelivery(jobId, 'delivered', 3);
    expect(await store.get(jobId)).toBeUndefined();
    expect(await store.listAttempts(jobId)).toEqual([]);
  });

  it("lists an organization's jobs newest first, page by page, and no other organization's", async () => {
    store = await make();
    const organizationId = `org-${randomUUID()}`;
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      const job = buildJob({ organizationId });
      await store.create(job);
      created.push(job.jobId);
    }
    await store.create(buildJob({ organizationId: `org-${randomUUID()}` }));
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await store.listJobs(organizationId, { limit: 3, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.jobs.map((j) => j.jobId));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([...created].reverse());
  });

  it('counts every job of the organization by status and delivery state, through each change, and no other organization', async () => {
    store = await make();
    const organizationId = `org-${randomUUID()}`;
    const [a, b, c] = [
      buildJob({ organizationId }),
      buildJob({ organizationId, webhookReceiver: null, delivery: null }),
      buildJob({ organizationId }),
    ];
    for (const job of [a!, b!, c!]) await store.create(job);
    await store.create(buildJob({ organizationId: `org-${randomUUID()}` }));
    expect(await store.countJobs(organizationId)).toEqual({
      jobs: 3,
      status: { processing: 3, success: 0, fail: 0 },
      delivery: { pending: 2, delivered: 0, rejected: 0, failed: 0, none: 1 },
    });

    await store.finish(a!.jobId, successResult());
    expect(await store.endRound(a!.jobId, 0, 'delivered')).toBe(true);
    await store.finish(b!.jobId, failResult);
    await store.finish(c!.jobId, failResult);
    expect(await store.endRound(c!.jobId, 0, 'failed')).toBe(true);
    // A second round of a: pending again, then rejected.
    expect(await store.startRound(a!.jobId, 1)).toBe(true);
    expect((await store.countJobs(organizationId)).delivery).toEqual({ pending: 1, delivered: 0, rejected: 0, failed: 1, none: 1 });
    expect(await store.endRound(a!.jobId, 1, 'rejected')).toBe(true);
    await store.setDelivery(c!.jobId, 'delivered');
    expect(await store.countJobs(organizationId)).toEqual({
      jobs: 3,
      status: { processing: 0, success: 1, fail: 2 },
      delivery: { pending: 0, delivered: 1, rejected: 1, failed: 0, none: 1 },
    });
    // Refused changes change nothing.
    expect(await store.finish(a!.jobId, failResult)).toBeUndefined();
    expect(await store.endRound(a!.jobId, 1, 'failed')).toBe(false);
    expect((await store.countJobs(organizationId)).status).toEqual({ processing: 0, success: 1, fail: 2 });
    expect(await store.countJobs(`org-${randomUUID()}`)).toEqual({
      jobs: 0,
      status: { processing: 0, success: 0, fail: 0 },
      delivery: { pending: 0, delivered: 0, rejected: 0, failed: 0, none: 0 },
    });
  });

  it('counts what walking every page of the list finds, past several pages', async () => {
    store = await make();
    const organizationId = `org-${randomUUID()}`;
    const outcomes = ['delivered', 'rejected', 'failed'] as const;
    for (let i = 0; i < 130; i++) {
      const job = buildJob({ organizationId, ...(i % 5 === 0 ? { webhookReceiver: null, delivery: null } : {}) });
      await store.create(job);
      if (i % 7 === 0) continue; // stays processing
      await store.finish(job.jobId, i % 3 === 0 ? failResult : successResult());
      if (job.delivery !== null && i % 4 !== 0) await store.endRound(job.jobId, 0, outcomes[i % 3]!);
    }
    const walked = { jobs: 0, status: {} as Record<string, number>, delivery: {} as Record<string, number> };
    let cursor: string | undefined;
    for (;;) {
      const page = await store.listJobs(organizationId, { limit: 50, ...(cursor === undefined ? {} : { cursor }) });
      for (const job of page.jobs) {
        walked.jobs++;
        walked.status[job.status] = (walked.status[job.status] ?? 0) + 1;
        walked.delivery[job.delivery ?? 'none'] = (walked.delivery[job.delivery ?? 'none'] ?? 0) + 1;
      }
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    const counts = await store.countJobs(organizationId);
    expect(walked.jobs).toBe(130);
    expect(counts.jobs).toBe(130);
    for (const [status, n] of Object.entries(counts.status)) expect([status, n]).toEqual([status, walked.status[status] ?? 0]);
    for (const [delivery, n] of Object.entries(counts.delivery)) expect([delivery, n]).toEqual([delivery, walked.delivery[delivery] ?? 0]);
  });
});
