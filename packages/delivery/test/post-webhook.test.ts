/**
 * postWebhook on real sockets: TLS through the pinned lookup (certificate checked against the URL's
 * name while the socket goes to the checked address), the answer's body cap, a body that never ends.
 */
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKeyPair } from '@jobhook/core/testing';
import { createDeliverer, createRetryPolicy, createSsrfGuard, postWebhook } from '../src/index.js';
import { createTestLog, seedJob, testPayload } from './helpers/test-jobs.js';
import { startDeliveryReceiver, type DeliveryReceiver } from './helpers/delivery-receiver.js';
import { startTlsReceiver, type TlsReceiver } from './helpers/tls-receiver.js';

const LOCAL = { address: '127.0.0.1', family: 4 } as const;
let tls: TlsReceiver;
const seen: Array<{ servername: string | false | null; host: string | undefined }> = [];
let plain: DeliveryReceiver;

beforeAll(async () => {
  // A self-signed certificate for receiver.test only.
  tls = await startTlsReceiver({ commonName: 'receiver.test', subjectAltName: 'DNS:receiver.test' }, (req, res) => {
    seen.push({ servername: (req.socket as TLSSocket).servername, host: req.headers.host });
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  plain = await startDeliveryReceiver((req, res) => {
    if (req.path === '/big') res.writeHead(500, { 'retry-after': 'Wed, 21 Oct 2099 07:28:00 GMT' }).end('x'.repeat(1 << 20));
    else if (req.path === '/endless') {
      res.writeHead(200);
      res.write('partial');
    } else res.writeHead(204).end();
  });
});

afterAll(async () => {
  await tls.close();
  await plain.close();
});

const post = (url: string, extra: { ca?: string; timeoutMs?: number } = {}) =>
  postWebhook({
    url: new URL(url),
    address: LOCAL,
    body: Buffer.from('{}'),
    headers: { 'Content-Type': 'application/json' },
    timeoutMs: 2000,
    ...extra,
  });

describe('postWebhook', () => {
  it('https: connects to the pinned address, sends SNI and checks the certificate against the URL name', async () => {
    const result = await post(`https://receiver.test:${tls.port}/hook`, { ca: tls.cert });
    expect(result).toMatchObject({ kind: 'response', statusCode: 200, bodyText: 'ok' });
    expect(seen.at(-1)).toEqual({ servername: 'receiver.test', host: `receiver.test:${tls.port}` });
  });

  it('https: a trailing-dot name is the same name for SNI and the certificate', async () => {
    const result = await post(`https://receiver.test.:${tls.port}/hook`, { ca: tls.cert });
    expect(result).toMatchObject({ kind: 'response', statusCode: 200 });
    expect(seen.at(-1)?.servername).toBe('receiver.test');
  });

  it('https: a certificate for another name is a network error, not an answer', async () => {
    const result = await post(`https://other.test:${tls.port}/hook`, { ca: tls.cert });
    expect(result).toMatchObject({ kind: 'error', code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    const untrusted = await post(`https://receiver.test:${tls.port}/hook`);
    expect(untrusted).toMatchObject({ kind: 'error', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  });

  it('keeps at most maxResponseBytes of the answer and reads Retry-After dates', async () => {
    const started = Date.now();
    const result = await postWebhook({
      url: new URL(plain.url('/big')),
      address: LOCAL,
      body: Buffer.from('{}'),
      headers: {},
      timeoutMs: 2000,
      maxResponseBytes: 64,
    });
    expect(result).toMatchObject({ kind: 'response', statusCode: 500, bodyText: 'x'.repeat(64) });
    expect(result.kind === 'response' && result.retryAfterMs).toBeGreaterThan(1e12);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('an answer whose body never ends still counts by its status when the timer fires', async () => {
    const result = await post(plain.url('/endless'), { timeoutMs: 150 });
    expect(result).toMatchObject({ kind: 'response', statusCode: 200, bodyText: 'partial' });
  });
});

describe('deliverer over https', () => {
  it('delivers to https://receiver.test:<port> through the guard, the pinned address and a private CA', async () => {
    const jobs = createTestLog();
    const deliverer = createDeliverer({
      jobs,
      payload: testPayload,
      privateKey: createTestKeyPair().privateKey,
      policy: createRetryPolicy({ maxRetries: 0 }),
      guard: createSsrfGuard({ allowCidrs: ['127.0.0.1/32'], resolve: async () => [LOCAL] }),
      attemptTimeoutMs: 2000,
      ca: tls.cert,
    });
    const job = await seedJob(jobs, { webhookReceiver: `https://receiver.test:${tls.port}/hook` });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
    expect(record).toMatchObject({ outcome: 'delivered', statusCode: 200, address: '127.0.0.1' });
  });
});
