/**
 * The retry schedule on real local receivers (http://127.0.0.1:<port>), driven as the queue does.
 * Small timings: retry base 10 ms, attempt timeout 200 ms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createVerifier } from '@jobhook/core';
import { DEFAULT_HEADER_NAMES } from '@jobhook/core/sign';
import { createTestKeyPair } from '@jobhook/core/testing';
import { createDeliverer, createRetryPolicy, createSsrfGuard, type DelivererOptions } from '../src/index.js';
import { createTestLog, driveDelivery, seedJob, testPayload, type TestJob } from './helpers/test-jobs.js';
import {
  answer,
  closedPort,
  hang,
  reset,
  sequence,
  startDeliveryReceiver,
  type DeliveryReceiver,
  type ReceiverScript,
} from './helpers/delivery-receiver.js';

const keys = createTestKeyPair();
const ATTEMPT_TIMEOUT_MS = 200;
const CAP_MS = 200;
const receivers: DeliveryReceiver[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(script: ReceiverScript): Promise<DeliveryReceiver> {
  const r = await startDeliveryReceiver(script);
  receivers.push(r);
  return r;
}

function setup(overrides: Partial<DelivererOptions<TestJob>> = {}) {
  const jobs = createTestLog();
  const deliverer = createDeliverer({
    jobs,
    payload: testPayload,
    privateKey: keys.privateKey,
    policy: createRetryPolicy({ baseMs: 10, capMs: CAP_MS }),
    guard: createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] }),
    attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    ...overrides,
  });
  return { jobs, deliverer };
}

/** Delivers one job to `url` and returns the records, the stored log and the final state. */
async function deliverTo(url: string, overrides: Partial<DelivererOptions<TestJob>> = {}) {
  const { jobs, deliverer } = setup(overrides);
  const job = await seedJob(jobs, { webhookReceiver: url });
  const records = await driveDelivery(deliverer, job.jobId);
  return { job, records, stored: await jobs.listAttempts(job.jobId), state: (await jobs.get(job.jobId))?.delivery };
}

describe('deliverer: retry schedule on real receivers', () => {
  it('2xx: delivered after one attempt, with the headers of spec §6.1 and a verifying signature', async () => {
    const r = await receiver(answer(200, {}, 'ok'));
    const { records, stored, state } = await deliverTo(r.url('/hook?tenant=7'));
    expect(records.map((x) => x.outcome)).toEqual(['delivered']);
    expect(stored).toEqual(records);
    expect(state).toBe('delivered');
    expect(records[0]).toMatchObject({
      round: 0,
      attempt: 1,
      statusCode: 200,
      address: '127.0.0.1',
      error: null,
      nextDelayMs: null,
      url: r.url('/hook?tenant=7'),
    });
    expect(records[0]?.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    expect(r.requests).toHaveLength(1);
    const req = r.requests[0]!;
    expect([req.method, req.path]).toEqual(['POST', '/hook?tenant=7']);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toMatch(/^jobhook-sender\/\d+\.\d+\.\d+/);
    expect(req.headers['x-service-webhook']).toBe('true');
    expect(req.headers['x-service-hash-algorithm']).toBe('SHA256');
    expect(req.headers['x-service-signature']).toMatch(/^[0-9a-f]{512}$/);
    expect(req.headers['host']).toBe(`127.0.0.1:${r.port}`);
    expect(Number(req.headers['content-length'])).toBe(req.body.length);
    const verified = createVerifier({ publicKeys: keys.publicKeyPem }).verify({
      body: req.body,
      signature: req.headers['x-service-signature'] as string,
    });
    expect(verified).toMatchObject({ profile: 'python' });
  });

  it('uses configured header names and user agent', async () => {
    const r = await receiver(answer(204));
    await deliverTo(r.url(), { headerNames: { signature: 'X-Sig', webhook: 'X-Hook' }, userAgent: 'custom-sender/9' });
    const headers = r.requests[0]!.headers;
    expect(headers['x-sig']).toMatch(/^[0-9a-f]+$/);
    expect(headers['x-hook']).toBe('true');
    expect(headers[DEFAULT_HEADER_NAMES.signature.toLowerCase()]).toBeUndefined();
    expect(headers['user-agent']).toBe('custom-sender/9');
  });

  it.each([400, 401, 404, 410])('%i: rejected after one attempt, never retried', async (status) => {
    const r = await receiver(answer(status, { 'content-type': 'application/json' }, '{"error":{"code":"ERR_X"}}'));
    const { records, state } = await deliverTo(r.url());
    expect(records.map((x) => [x.outcome, x.statusCode])).toEqual([['rejected', status]]);
    // Not jobhook's answer shape (no message): status and length only, never the body.
    expect(records[0]).toMatchObject({ errorMessage: null, responseBytes: 26, responseBody: null });
    expect(state).toBe('rejected');
    expect(r.requests).toHaveLength(1);
  });

  it.each([500, 502, 503])('%i every time: exactly 4 attempts, then failed', async (status) => {
    const r = await receiver(answer(status));
    const { records, stored, state } = await deliverTo(r.url());
    expect(records.map((x) => x.outcome)).toEqual(['retry', 'retry', 'retry', 'failed']);
    expect(records.map((x) => x.attempt)).toEqual([1, 2, 3, 4]);
    expect(records.every((x) => x.statusCode === status)).toBe(true);
    expect(records.slice(0, 3).every((x) => x.nextDelayMs !== null && x.nextDelayMs >= 5 && x.nextDelayMs <= CAP_MS)).toBe(true);
    expect(records[3]?.nextDelayMs).toBeNull();
    expect(stored).toHaveLength(4);
    expect(state).toBe('failed');
    expect(r.requests).toHaveLength(4);
    // The receiver saw the retries no sooner than the delays said.
    for (let i = 1; i < 4; i++) {
      expect(r.requests[i]!.at - r.requests[i - 1]!.at).toBeGreaterThanOrEqual((records[i - 1]!.nextDelayMs as number) - 2);
    }
  });

  it('500 then 200: delivered on the second attempt', async () => {
    const r = await receiver(sequence(answer(500), answer(200)));
    const { records, state } = await deliverTo(r.url());
    expect(records.map((x) => [x.outcome, x.statusCode])).toEqual([
      ['retry', 500],
      ['delivered', 200],
    ]);
    expect(state).toBe('delivered');
    // The same signed payload both times (receivers dedupe on job_id).
    expect(r.requests[0]!.body.equals(r.requests[1]!.body)).toBe(true);
  });

  it('a receiver slower than the attempt timeout: timeout recorded, then retried', async () => {
    const r = await receiver(sequence(hang, answer(200)));
    const { records, state } = await deliverTo(r.url());
    expect(records.map((x) => [x.outcome, x.error])).toEqual([
      ['retry', 'timeout'],
      ['delivered', null],
    ]);
    expect(records[0]?.statusCode).toBeNull();
    expect(records[0]?.durationMs).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 5);
    expect(records[0]?.durationMs).toBeLessThan(ATTEMPT_TIMEOUT_MS + 500);
    expect(state).toBe('delivered');
  });

  it('a receiver that never answers: 4 timeouts, then failed', async () => {
    const r = await receiver(hang);
    const { records, state } = await deliverTo(r.url());
    expect(records.map((x) => [x.outcome, x.error])).toEqual([
      ['retry', 'timeout'],
      ['retry', 'timeout'],
      ['retry', 'timeout'],
      ['failed', 'timeout'],
    ]);
    expect(state).toBe('failed');
  });

  it('connection refused (closed port): ECONNREFUSED, retried', async () => {
    const port = await closedPort();
    const { records, state } = await deliverTo(`http://127.0.0.1:${port}/hook`);
    expect(records.map((x) => [x.outcome, x.error])).toEqual([
      ['retry', 'ECONNREFUSED'],
      ['retry', 'ECONNREFUSED'],
      ['retry', 'ECONNREFUSED'],
      ['failed', 'ECONNREFUSED'],
    ]);
    expect(records[0]?.address).toBe('127.0.0.1');
    expect(state).toBe('failed');
  });

  it('connection reset (the server destroys the socket): ECONNRESET, retried', async () => {
    const r = await receiver(sequence(reset, answer(200)));
    const { records, state } = await deliverTo(r.url());
    expect(records.map((x) => [x.outcome, x.error])).toEqual([
      ['retry', 'ECONNRESET'],
      ['delivered', null],
    ]);
    expect(state).toBe('delivered');
    expect(r.requests).toHaveLength(2);
  });

  it('503 with Retry-After: 1 is honoured (the next attempt waits >= 1000 ms)', async () => {
    const r = await receiver(sequence(answer(503, { 'retry-after': '1' }), answer(200)));
    const { records } = await deliverTo(r.url(), { policy: createRetryPolicy({ baseMs: 10, capMs: 2000 }) });
    expect(records.map((x) => x.outcome)).toEqual(['retry', 'delivered']);
    expect(records[0]?.nextDelayMs).toBe(1000);
    expect(r.requests[1]!.at - r.requests[0]!.at).toBeGreaterThanOrEqual(995);
  });

  it('Retry-After longer than the cap is capped', async () => {
    const r = await receiver(sequence(answer(503, { 'retry-after': '1' }), answer(200)));
    const { records } = await deliverTo(r.url(), { policy: createRetryPolicy({ baseMs: 10, capMs: 50 }) });
    expect(records.map((x) => [x.outcome, x.nextDelayMs])).toEqual([
      ['retry', 50],
      ['delivered', null],
    ]);
  });

  it('3xx: not followed (the Location target receives nothing), rejected', async () => {
    const target = await receiver(answer(200));
    const r = await receiver(answer(302, { location: target.url('/elsewhere') }));
    const { records, state } = await deliverTo(r.url());
    expect(records.map((x) => [x.outcome, x.statusCode, x.error])).toEqual([['rejected', 302, 'redirect_not_followed']]);
    // The Location is the receiver's to choose, like a body: not read back (a fixed text per code).
    expect(records[0]?.errorMessage).toBe('the receiver answered with a redirect (3xx), which is not followed');
    expect(state).toBe('rejected');
    expect(r.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });
});

describe('deliverer: rounds ended while an attempt is queued or in flight', () => {
  it('an attempt of a round no longer pending is not sent nor recorded (round_ended)', async () => {
    const r = await receiver(answer(200));
    const { jobs, deliverer } = setup();
    const job = await seedJob(jobs, { webhookReceiver: r.url() });
    expect(await jobs.endRound(job.jobId, 0, 'failed')).toBe(true);
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 2 });
    expect([record.outcome, record.error]).toEqual(['rejected', 'round_ended']);
    expect(r.requests).toHaveLength(0);
    expect(await jobs.listAttempts(job.jobId)).toEqual([]);
    expect((await jobs.get(job.jobId))?.delivery).toBe('failed');
  });

  it("a late answer of round 0 is recorded but does not overwrite round 1's pending state", async () => {
    let release: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      release = resolve;
    });
    const r = await receiver((_req, res) => {
      void answered.then(() => res.writeHead(200).end('ok'));
    });
    const { jobs, deliverer } = setup({ attemptTimeoutMs: 5000 });
    const job = await seedJob(jobs, { webhookReceiver: r.url() });
    const inFlight = deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    await waitUntilRequests(r, 1);
    // Meanwhile the sender gave round 0 up and a redeliver started round 1.
    expect(await jobs.endRound(job.jobId, 0, 'failed')).toBe(true);
    expect(await jobs.startRound(job.jobId, 1)).toBe(true);
    release();
    expect((await inFlight).outcome).toBe('delivered');
    expect(await jobs.get(job.jobId)).toMatchObject({ delivery: 'pending', deliveryRound: 1 });
    expect((await jobs.listAttempts(job.jobId)).map((a) => [a.round, a.outcome])).toEqual([[0, 'delivered']]);
  });
});

async function waitUntilRequests(r: DeliveryReceiver, n: number): Promise<void> {
  for (let i = 0; i < 200 && r.requests.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(r.requests).toHaveLength(n);
}
