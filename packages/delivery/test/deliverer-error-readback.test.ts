/**
 * What the deliveries log may read back of an allow-listed internal receiver: a fixed text per
 * error code, never Node's message (which names the address and port connected to, or a
 * certificate's internal host names); that message goes to the deliverer's log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@jobhook/core';
import { createTestKeyPair } from '@jobhook/core/testing';
import { attemptErrorText, createDeliverer, createRetryPolicy, createSsrfGuard, type SsrfGuardOptions } from '../src/index.js';
import { closedPort } from './helpers/delivery-receiver.js';
import { createTestLog, seedJob, testPayload } from './helpers/test-jobs.js';
import { startTlsReceiver, type TlsReceiver } from './helpers/tls-receiver.js';

const keys = createTestKeyPair();
let tls: TlsReceiver;

beforeAll(async () => {
  // A certificate for internal names only: a receiver URL naming another host fails its altname check.
  tls = await startTlsReceiver({ commonName: 'billing.corp.internal', subjectAltName: 'DNS:*.corp.internal' }, (_req, res) =>
    res.writeHead(200).end(),
  );
});
afterAll(async () => {
  await tls?.close();
});

function setup(guardOptions: SsrfGuardOptions) {
  const jobs = createTestLog();
  const warnings: Array<{ error?: unknown; detail?: unknown }> = [];
  const deliverer = createDeliverer({
    jobs,
    payload: testPayload,
    privateKey: keys.privateKey,
    policy: createRetryPolicy({ baseMs: 10, capMs: 100 }),
    guard: createSsrfGuard(guardOptions),
    attemptTimeoutMs: 5000,
    ca: tls.cert,
    logger: { ...silentLogger, warn: (obj: object) => warnings.push(obj) },
  });
  return { jobs, deliverer, warnings };
}

describe('deliverer: no internal address or name read back through the log', () => {
  it('connection refused on an allow-listed address: a fixed text recorded, Node message (address and port) logged', async () => {
    const port = await closedPort();
    const { jobs, deliverer, warnings } = setup({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] });
    const job = await seedJob(jobs, { webhookReceiver: `http://127.0.0.1:${port}/hook` });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });

    expect(record).toMatchObject({ outcome: 'retry', error: 'ECONNREFUSED', errorMessage: 'the receiver refused the connection' });
    expect(await jobs.listAttempts(job.jobId)).toEqual([record]);
    expect(warnings).toEqual([expect.objectContaining({ error: 'ECONNREFUSED', detail: expect.stringContaining(`127.0.0.1:${port}`) })]);
  });

  it("a certificate for internal names: the TLS code and a fixed text recorded, the cert's altnames only in the log", async () => {
    const { jobs, deliverer, warnings } = setup({
      allowCidrs: ['127.0.0.0/8'],
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const job = await seedJob(jobs, { webhookReceiver: `https://receiver.example.com:${tls.port}/hook` });
    const record = await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });

    expect(record).toMatchObject({ outcome: 'retry', error: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    expect(record.errorMessage).toBe(attemptErrorText('ERR_TLS_CERT_ALTNAME_INVALID'));
    expect(JSON.stringify(await jobs.listAttempts(job.jobId))).not.toContain('corp.internal');
    expect(warnings).toEqual([expect.objectContaining({ detail: expect.stringContaining('DNS:*.corp.internal') })]);
  });

  it('attemptErrorText: one fixed text per code, a text per kind for other codes, never the code echoed with a message', () => {
    expect(attemptErrorText(null)).toBeNull();
    expect(attemptErrorText('timeout')).toBe('the receiver did not answer within the attempt timeout');
    expect(attemptErrorText('CERT_HAS_EXPIRED')).toBe(attemptErrorText('DEPTH_ZERO_SELF_SIGNED_CERT'));
    expect(attemptErrorText('HPE_INVALID_CONSTANT')).toBe("the receiver's answer was not valid HTTP");
    expect(attemptErrorText('constructor')).toBe('the connection to the receiver failed');
  });
});
