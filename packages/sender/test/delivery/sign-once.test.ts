/**
 * A job's webhook is canonicalized and signed once, not at every attempt: the signer is counted
 * through the deliverer's `sign` option (core's signPayloadAsync, wrapped). Attempts are made one
 * after another without the retry delays (the deliverer does not wait; the queue does).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier, silentLogger } from '@jobhook/core';
import { signPayloadAsync } from '@jobhook/core/sign';
import { createTestKeyPair } from '@jobhook/core/testing';
import {
  attemptErrorText,
  createDeliverer,
  createRetryPolicy,
  createSsrfGuard,
  type DelivererOptions,
  type PayloadSigner,
} from '@jobhook/delivery';
import { buildWebhookPayload } from '../../src/jobs/webhook-payload.js';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { JobRecord, JobStore } from '../../src/jobs/job-record.js';
import { createMemoryJobStore } from '../../src/jobs/memory-job-store.js';
import { createRedisJobStore } from '../../src/jobs/redis-job-store.js';
import { seedJob } from '../helpers/delivery-jobs.js';
import { answer, startDeliveryReceiver, type DeliveryReceiver } from '../../../delivery/test/helpers/delivery-receiver.js';

const keys = createTestKeyPair();
let receiver: DeliveryReceiver; // answers 500: every attempt of a round is made
let redis: RedisServer;
const stores: JobStore[] = [];

beforeAll(async () => {
  receiver = await startDeliveryReceiver(answer(500));
  redis = await startRedisServer();
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await receiver?.close();
  await redis?.dispose();
});

/** core's signer, counting its calls per job id. */
function countingSigner(): { sign: PayloadSigner; calls: string[] } {
  const calls: string[] = [];
  const sign: PayloadSigner = (payload, privateKey, options) => {
    calls.push((JSON.parse(payload.toString('utf8')) as { job_id: string }).job_id);
    return signPayloadAsync(payload, privateKey, options);
  };
  return { sign, calls };
}

function deliverer(jobs: JobStore, overrides: Partial<DelivererOptions<JobRecord>> = {}) {
  return createDeliverer({
    jobs,
    payload: buildWebhookPayload,
    privateKey: keys.privateKey,
    policy: createRetryPolicy({ maxRetries: 3, baseMs: 10, capMs: 20 }),
    guard: createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] }),
    attemptTimeoutMs: 2000,
    ...overrides,
  });
}

/** Makes attempts 1.. of `round` until one is not `retry`; returns the outcomes. */
async function runRound(d: ReturnType<typeof deliverer>, jobId: string, round: number): Promise<string[]> {
  const outcomes: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const record = await d.attempt({ jobId, round, attempt });
    outcomes.push(record.outcome);
    if (record.outcome !== 'retry') return outcomes;
  }
}

const bodiesOf = (jobId: string) => receiver.requests.filter((r) => r.body.toString('utf8').includes(jobId));

describe('deliverer: one signature per job', () => {
  it('4 attempts of a round and 4 more of a redelivery round: signed once, the same bytes sent 8 times', async () => {
    const jobs = createMemoryJobStore();
    const { sign, calls } = countingSigner();
    const d = deliverer(jobs, { sign });
    const job = await seedJob(jobs, { webhookReceiver: receiver.url('/hook'), userParametersJson: '{"ratio":1.0,"name":"Zoë"}' });

    expect(await runRound(d, job.jobId, 0)).toEqual(['retry', 'retry', 'retry', 'failed']);
    expect(await jobs.startRound(job.jobId, 1)).toBe(true); // a redeliver
    expect(await runRound(d, job.jobId, 1)).toEqual(['retry', 'retry', 'retry', 'failed']);

    expect(calls).toEqual([job.jobId]);
    const sent = bodiesOf(job.jobId);
    expect(sent).toHaveLength(8);
    for (const r of sent) {
      expect(r.body.equals(sent[0]!.body)).toBe(true);
      expect(r.headers['x-service-signature']).toBe(sent[0]!.headers['x-service-signature']);
      expect(r.headers['user-agent']).toMatch(/^jobhook-sender\//);
    }
    expect(
      createVerifier({ publicKeys: keys.publicKeyPem }).verify({
        body: sent[0]!.body,
        signature: sent[0]!.headers['x-service-signature'] as string,
      }),
    ).toMatchObject({ profile: 'python' });
  });

  it('webhook(job) shows the bytes and headers the attempts sent, from the same cache (not signed again)', async () => {
    const jobs = createMemoryJobStore();
    const { sign, calls } = countingSigner();
    const d = deliverer(jobs, { sign, userAgent: 'shown-as-sent/1' });
    const job = await seedJob(jobs, { webhookReceiver: receiver.url('/shown'), userParametersJson: '{"ratio":1.0}' });
    await d.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    const shown = await d.webhook((await jobs.get(job.jobId))!);

    expect(calls).toEqual([job.jobId]);
    const [sent] = bodiesOf(job.jobId);
    expect(shown.body.equals(sent!.body)).toBe(true);
    for (const [name, value] of Object.entries(shown.headers)) expect(sent!.headers[name.toLowerCase()]).toBe(value);
    expect(shown.headers['User-Agent']).toBe('shown-as-sent/1');
  });

  it('webhook(job) of a job not in the cache signs it for the look without keeping it (old jobs browsed never evict jobs being delivered)', async () => {
    const jobs = createMemoryJobStore();
    const { sign, calls } = countingSigner();
    const d = deliverer(jobs, { sign });
    const job = await seedJob(jobs, { webhookReceiver: receiver.url('/looked-at') });
    await d.webhook(job);
    await d.webhook(job);
    expect(calls).toEqual([job.jobId, job.jobId]); // not kept: signed for each look
    await d.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    await d.webhook((await jobs.get(job.jobId))!);
    expect(calls).toHaveLength(3); // the attempt's signature is kept and shown
  });

  it('two jobs: one signature each; concurrent attempts of one job share one signature', async () => {
    const jobs = createMemoryJobStore();
    const { sign, calls } = countingSigner();
    const d = deliverer(jobs, { sign });
    const a = await seedJob(jobs, { webhookReceiver: receiver.url('/a') });
    const b = await seedJob(jobs, { webhookReceiver: receiver.url('/b') });
    // A late attempt of a round running while the next one starts (the deliverer does not serialize them).
    await Promise.all([d.attempt({ jobId: a.jobId, round: 0, attempt: 1 }), d.attempt({ jobId: a.jobId, round: 0, attempt: 2 })]);
    await d.attempt({ jobId: b.jobId, round: 0, attempt: 1 });
    await d.attempt({ jobId: a.jobId, round: 0, attempt: 3 });
    expect(calls.sort()).toEqual([a.jobId, b.jobId].sort());
  });

  it('Redis job store: nothing signed is stored with the job; another process (or a restart) signs it once more, to the same bytes', async () => {
    const prefix = `sign-once-${randomUUID().slice(0, 8)}:`;
    const first = await createRedisJobStore({ redis: redis.url, prefix });
    const second = await createRedisJobStore({ redis: redis.url, prefix });
    stores.push(first, second);
    const job = await seedJob(first, { webhookReceiver: receiver.url('/redis') });
    const one = countingSigner();
    const two = countingSigner();
    const before = await first.get(job.jobId);

    // Process one makes attempts 1 and 2, then "dies"; process two takes attempts 3 and 4 over.
    const d1 = deliverer(first, { sign: one.sign });
    const d2 = deliverer(second, { sign: two.sign });
    expect((await d1.attempt({ jobId: job.jobId, round: 0, attempt: 1 })).outcome).toBe('retry');
    expect((await d1.attempt({ jobId: job.jobId, round: 0, attempt: 2 })).outcome).toBe('retry');
    expect((await d2.attempt({ jobId: job.jobId, round: 0, attempt: 3 })).outcome).toBe('retry');
    expect((await d2.attempt({ jobId: job.jobId, round: 0, attempt: 4 })).outcome).toBe('failed');

    expect(one.calls).toEqual([job.jobId]);
    expect(two.calls).toEqual([job.jobId]);
    const sent = bodiesOf(job.jobId);
    expect(sent).toHaveLength(4);
    expect(
      sent.every((r) => r.body.equals(sent[0]!.body) && r.headers['x-service-signature'] === sent[0]!.headers['x-service-signature']),
    ).toBe(true);
    // The record holds no signed payload: it changed only in its delivery state.
    expect(await second.get(job.jobId)).toEqual({ ...before, delivery: 'failed' });
  });

  it('bounded: past signedCacheEntries the least recently used job is dropped, and signed again when it comes back', async () => {
    const jobs = createMemoryJobStore();
    const { sign, calls } = countingSigner();
    const d = deliverer(jobs, { sign, signedCacheEntries: 2 });
    const [a, b, c] = [
      await seedJob(jobs, { webhookReceiver: receiver.url() }),
      await seedJob(jobs, { webhookReceiver: receiver.url() }),
      await seedJob(jobs, { webhookReceiver: receiver.url() }),
    ];
    for (const [job, attempt] of [
      [a, 1],
      [b, 1],
      [a, 2],
      [c, 1],
      [a, 3],
      [b, 2],
    ] as const) {
      await d.attempt({ jobId: job.jobId, round: 0, attempt });
    }
    // a kept (used again before c came), b dropped for c, then signed again.
    expect(calls).toEqual([a.jobId, b.jobId, c.jobId, b.jobId]);
  });

  it('a payload whose canonical form may exceed maxCanonicalBytes: rejected (payload_invalid), nothing sent, round ended', async () => {
    const jobs = createMemoryJobStore();
    const warnings: { detail?: unknown }[] = [];
    const logger = { ...silentLogger, warn: (obj: object) => warnings.push(obj) };
    const d = deliverer(jobs, { maxCanonicalBytes: 4096, logger });
    const nested = `{"p":${'['.repeat(100)}${']'.repeat(100)}}`; // 200 bytes, ~20 KB canonical
    const job = await seedJob(jobs, { webhookReceiver: receiver.url('/too-large'), userParametersJson: nested });
    const record = await d.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(record).toMatchObject({ outcome: 'rejected', error: 'payload_invalid', statusCode: null });
    // The record a submitter reads back holds a fixed text; the service log has why.
    expect(record.errorMessage).toBe(attemptErrorText('payload_invalid'));
    expect(warnings.map((w) => w.detail)).toEqual([
      expect.stringMatching(/canonical form of this body may reach \d+ bytes; the limit is 4096/),
    ]);
    expect(bodiesOf(job.jobId)).toHaveLength(0);
    expect((await jobs.get(job.jobId))?.delivery).toBe('rejected');
  });

  it('refuses bad cache and limit options', () => {
    const jobs = createMemoryJobStore();
    expect(() => deliverer(jobs, { maxCanonicalBytes: 1 })).toThrow('maxCanonicalBytes must be an integer >= 2');
    expect(() => deliverer(jobs, { signedCacheEntries: 0 })).toThrow('signedCacheEntries must be a positive integer');
    expect(() => deliverer(jobs, { signedCacheBytes: 1.5 })).toThrow('signedCacheBytes must be a positive integer');
    expect(() => deliverer(jobs, { sign: 'core' as unknown as PayloadSigner })).toThrow('sign must be a function');
  });
});
