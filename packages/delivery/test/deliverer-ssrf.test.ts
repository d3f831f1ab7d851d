/**
 * The SSRF guard at attempt time: refusal sends nothing, DNS rebinding is caught, and the socket
 * connects to the checked address (pinned lookup), not to whatever system DNS says.
 */
import { lookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKeyPair } from '@jobhook/core/testing';
import {
  attemptErrorText,
  createDeliverer,
  createRetryPolicy,
  createSsrfGuard,
  type HostResolver,
  type SsrfGuardOptions,
} from '../src/index.js';
import { createTestLog, seedJob, testPayload } from './helpers/test-jobs.js';
import { answer, startDeliveryReceiver, type DeliveryReceiver } from './helpers/delivery-receiver.js';

const keys = createTestKeyPair();
let r: DeliveryReceiver;

beforeAll(async () => {
  r = await startDeliveryReceiver(answer(200));
});
afterAll(async () => {
  await r.close();
});

function setup(guardOptions: SsrfGuardOptions) {
  const jobs = createTestLog();
  const guard = createSsrfGuard(guardOptions);
  const deliverer = createDeliverer({
    jobs,
    payload: testPayload,
    privateKey: keys.privateKey,
    policy: createRetryPolicy({ baseMs: 10, capMs: 100 }),
    guard,
    attemptTimeoutMs: 300,
  });
  return { jobs, guard, deliverer };
}

describe('deliverer: SSRF guard on every attempt', () => {
  it('a refused receiver: rejected with ssrf_refused, nothing sent, delivery state rejected', async () => {
    const before = r.requests.length;
    // http allowed, but 127.0.0.1 is not: the server listening there must see nothing.
    const { jobs, deliverer } = setup({ allowInsecure: true });
    const job = await seedJob(jobs, { webhookReceiver: r.url() });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(record).toMatchObject({ outcome: 'rejected', error: 'ssrf_refused', statusCode: null, address: null, nextDelayMs: null });
    expect(record.errorMessage).toBe(attemptErrorText('ssrf_refused'));
    expect(await jobs.listAttempts(job.jobId)).toEqual([record]);
    expect((await jobs.get(job.jobId))?.delivery).toBe('rejected');
    expect(r.requests.length).toBe(before);
  });

  it('DNS rebinding: public at submission, 127.0.0.1 at attempt time: refused, nothing connects', async () => {
    const before = r.requests.length;
    let calls = 0;
    const rebinding: HostResolver = async () =>
      calls++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    const { jobs, guard, deliverer } = setup({ allowInsecure: true, resolve: rebinding });
    const url = `http://rebind.example.com:${r.port}/hook`;
    await expect(guard.resolveTarget(url)).resolves.toEqual({ address: '93.184.216.34', family: 4 }); // submission check passes
    const job = await seedJob(jobs, { webhookReceiver: url });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(record).toMatchObject({ outcome: 'rejected', error: 'ssrf_refused', address: null });
    expect(calls).toBe(2);
    expect(r.requests.length).toBe(before);
  });

  it('connects to the checked address: receiver.test resolves only through the injected resolver', async () => {
    // System DNS does not know the reserved .test name, so a delivery that arrives used the pinned lookup.
    await expect(lookup('receiver.test')).rejects.toThrow();
    const asked: string[] = [];
    const { jobs, deliverer } = setup({
      allowInsecure: true,
      allowCidrs: ['127.0.0.0/8'],
      resolve: async (host) => {
        asked.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const url = `http://receiver.test:${r.port}/pinned`;
    const job = await seedJob(jobs, { webhookReceiver: url });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(record).toMatchObject({ outcome: 'delivered', statusCode: 200, address: '127.0.0.1' });
    expect(asked).toEqual(['receiver.test']);
    const got = r.requests.at(-1)!;
    expect(got.path).toBe('/pinned');
    expect(got.headers['host']).toBe(`receiver.test:${r.port}`);
  });

  it('localhost with loopback allowed: delivered to 127.0.0.1, the name never resolved', async () => {
    const asked: string[] = [];
    const { jobs, deliverer } = setup({
      allowInsecure: true,
      allowCidrs: ['127.0.0.0/8'],
      resolve: async (host) => {
        asked.push(host);
        return [{ address: '93.184.216.34', family: 4 }];
      },
    });
    const job = await seedJob(jobs, { webhookReceiver: `http://localhost:${r.port}/local` });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(record).toMatchObject({ outcome: 'delivered', statusCode: 200, address: '127.0.0.1' });
    expect(asked).toEqual([]);
    expect(r.requests.at(-1)).toMatchObject({ path: '/local', headers: { host: `localhost:${r.port}` } });
  });

  it('localhost reaches a receiver on ::1 only when ::1 is allowed too (tried after 127.0.0.1 refuses)', async () => {
    const v6 = await startDeliveryReceiver(answer(200), '::1');
    try {
      const url = `http://localhost:${v6.port}/v6`;
      const v4Only = setup({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] });
      const refused = await v4Only.deliverer.attempt({
        jobId: (await seedJob(v4Only.jobs, { webhookReceiver: url })).jobId,
        round: 0,
        attempt: 1,
      });
      expect(refused).toMatchObject({ outcome: 'retry', error: 'ECONNREFUSED' });
      expect(v6.requests).toHaveLength(0);
      const both = setup({ allowInsecure: true, allowCidrs: ['127.0.0.0/8', '::1/128'] });
      const record = await both.deliverer.attempt({
        jobId: (await seedJob(both.jobs, { webhookReceiver: url })).jobId,
        round: 0,
        attempt: 1,
      });
      expect(record).toMatchObject({ outcome: 'delivered', statusCode: 200 });
      expect(v6.requests.map((q) => q.path)).toEqual(['/v6']);
    } finally {
      await v6.close();
    }
  });

  it('a host name that does not resolve at attempt time: ENOTFOUND, retried (not refused)', async () => {
    const { jobs, deliverer } = setup({
      allowInsecure: true,
      resolve: async (host) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
    });
    const job = await seedJob(jobs, { webhookReceiver: 'https://gone.example.com/hook' });
    const first = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(first).toMatchObject({ outcome: 'retry', error: 'ENOTFOUND', address: null });
    const last = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 4 });
    expect(last).toMatchObject({ outcome: 'failed', error: 'ENOTFOUND' });
    expect((await jobs.get(job.jobId))?.delivery).toBe('failed');
  });

  it('a resolver slower than the attempt timeout: timeout, retried', async () => {
    const { jobs, deliverer } = setup({ allowInsecure: true, resolve: () => new Promise(() => {}) });
    const job = await seedJob(jobs, { webhookReceiver: 'https://slow-dns.example.com/hook' });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(record).toMatchObject({ outcome: 'retry', error: 'timeout' });
    expect(record.durationMs).toBeGreaterThanOrEqual(295);
  });
});

describe('deliverer: tasks that are not attempts', () => {
  it('a stale round records nothing and answers stale_round', async () => {
    const before = r.requests.length;
    const { jobs, deliverer } = setup({ allowInsecure: true, allowCidrs: ['127.0.0.1/32'] });
    const job = await seedJob(jobs, { webhookReceiver: r.url(), deliveryRound: 2 });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 1, attempt: 2 });
    expect(record).toMatchObject({ outcome: 'rejected', error: 'stale_round', round: 1, attempt: 2 });
    expect(await jobs.listAttempts(job.jobId)).toEqual([]);
    expect((await jobs.get(job.jobId))?.delivery).toBe('pending');
    expect(r.requests.length).toBe(before);
    // The current round is delivered.
    expect(await deliverer.attempt({ jobId: job.jobId, round: 2, attempt: 1 })).toMatchObject({ outcome: 'delivered' });
  });

  it('an unknown job answers job_not_found and throws nothing', async () => {
    const { deliverer } = setup({});
    await expect(deliverer.attempt({ jobId: 'b3c1e0f4-0000-4000-8000-000000000000', round: 0, attempt: 1 })).resolves.toMatchObject({
      outcome: 'rejected',
      error: 'job_not_found',
    });
  });

  it('refuses wrong options at construction', () => {
    const base = {
      jobs: createTestLog(),
      payload: testPayload,
      privateKey: keys.privateKey,
      policy: createRetryPolicy(),
      guard: createSsrfGuard(),
    };
    for (const bad of [
      { attemptTimeoutMs: 0 },
      { bodyStyle: 'pretty' },
      { headerNames: { signature: 'X Sig' } },
      { userAgent: 'a\r\nX-Evil: 1' },
      { policy: {} },
      { payload: 'not a function' },
    ]) {
      expect(() => createDeliverer({ ...base, ...(bad as object) } as never)).toThrow(
        expect.objectContaining({ code: 'ERR_OPTION_INVALID' }),
      );
    }
    expect(() => createDeliverer({ ...base, privateKey: keys.publicKey })).toThrow(expect.objectContaining({ code: 'ERR_KEY_INVALID' }));
  });
});
