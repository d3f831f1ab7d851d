/**
 * The deliveries log records every answer (2xx included) as status and body length, and keeps the
 * body only when it is a jobhook receiver's own answer: an allow-listed internal service's answer
 * is never read back through the log (SSRF). Answers are read with a cap.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestKeyPair } from '@jobhook/core/testing';
import { createDeliverer, createRetryPolicy, createSsrfGuard } from '../src/index.js';
import { readJobhookAnswer } from '../src/jobhook-answer.js';
import { createTestLog, seedJob, testPayload } from './helpers/test-jobs.js';
import { answer, startDeliveryReceiver, type DeliveryReceiver, type ReceiverScript } from './helpers/delivery-receiver.js';

const keys = createTestKeyPair();
const receivers: DeliveryReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** One attempt of a fresh job against a receiver running `script`; the stored record. */
async function attemptAgainst(script: ReceiverScript) {
  const r = await startDeliveryReceiver(script);
  receivers.push(r);
  const jobs = createTestLog();
  const deliverer = createDeliverer({
    jobs,
    payload: testPayload,
    privateKey: keys.privateKey,
    policy: createRetryPolicy({ maxRetries: 0 }),
    guard: createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] }),
    attemptTimeoutMs: 30_000,
  });
  const job = await seedJob(jobs, { webhookReceiver: r.url() });
  await deliverer.attempt({ jobId: job.jobId, round: 0, attempt: 1 });
  const [stored] = await jobs.listAttempts(job.jobId);
  return { stored: stored!, jobId: job.jobId };
}

/** Answers with `status` and the job's id in a body made by `body`. */
const echo =
  (status: number, body: (jobId: string) => string): ReceiverScript =>
  (req, res) => {
    const { job_id: jobId } = JSON.parse(req.body.toString('utf8')) as { job_id: string };
    res.writeHead(status, { 'content-type': 'application/json' }).end(body(jobId));
  };

describe('deliveries log: answers', () => {
  it("a jobhook receiver's 2xx answer is kept, parsed", async () => {
    const { stored, jobId } = await attemptAgainst(echo(200, (id) => JSON.stringify({ ok: true, job_id: id, duplicate: false })));
    expect(stored).toMatchObject({ outcome: 'delivered', statusCode: 200, responseBody: { ok: true, job_id: jobId, duplicate: false } });
    expect(stored.responseBytes).toBe(JSON.stringify({ ok: true, job_id: jobId, duplicate: false }).length);
  });

  it("a jobhook receiver's error answer is kept, and errorMessage stays null", async () => {
    const body = { error: { code: 'ERR_SIGNATURE_INVALID', message: 'the signature does not verify' } };
    const { stored } = await attemptAgainst(answer(401, { 'content-type': 'application/json' }, JSON.stringify(body)));
    expect(stored).toMatchObject({
      outcome: 'rejected',
      statusCode: 401,
      errorMessage: null,
      responseBody: body,
      responseBytes: JSON.stringify(body).length,
    });
  });

  it.each([
    ['an internal service 2xx text', 200, 'root:x:0:0:root:/root:/bin/bash\n'],
    ['an internal service 4xx JSON', 403, '{"detail":"forbidden","token":"s3cr3t"}'],
    ['a 5xx HTML page', 500, '<html><body>internal: db=10.0.0.7</body></html>'],
    ['jobhook error shape with an extra member', 400, '{"error":{"code":"ERR_X","message":"m"},"secret":"s3cr3t"}'],
  ])('%s: status and length only, never the body', async (_name, status, body) => {
    const { stored } = await attemptAgainst(answer(status, {}, body));
    expect(stored.statusCode).toBe(status);
    expect(stored.responseBytes).toBe(Buffer.byteLength(body));
    expect(stored.responseBody).toBeNull();
    // Nowhere in the record either.
    expect(JSON.stringify(stored)).not.toContain(body.slice(0, 12));
  });

  it('an answer of 10 MB is not buffered: reading stops at 64 KiB, status counts', async () => {
    const { stored } = await attemptAgainst((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      const pump = (): void => {
        while (sent < 160 && res.write(chunk)) sent++;
        if (sent < 160) res.once('drain', pump);
        else res.end();
      };
      res.on('error', () => {});
      pump();
    });
    expect(stored).toMatchObject({ outcome: 'delivered', statusCode: 200, responseBody: null, error: null });
    expect(stored.responseBytes).toBeGreaterThan(64 * 1024);
    expect(stored.responseBytes).toBeLessThan(10 * 1024 * 1024);
  });

  it('an answer whose body never ends is settled once 64 KiB were read, not at the deadline', async () => {
    const { stored } = await attemptAgainst((_req, res) => {
      res.writeHead(503);
      res.on('error', () => {});
      const chunk = Buffer.alloc(16 * 1024, 'b');
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    // attemptTimeoutMs is 30 s: a "timeout" here would mean the body was read until the deadline.
    expect(stored).toMatchObject({ outcome: 'failed', statusCode: 503, error: null, responseBody: null });
    expect(stored.responseBytes).toBeGreaterThan(64 * 1024);
  });
});

describe('readJobhookAnswer: the strict shape', () => {
  const JOB = '7d3c6f7e-5b1a-4c2d-9e8f-0a1b2c3d4e5f';
  const read = (text: string | Buffer, complete = true) =>
    readJobhookAnswer(Buffer.isBuffer(text) ? text : Buffer.from(text), complete, JOB);

  it('accepts the two answers of a jobhook receiver, rebuilt from their members', () => {
    expect(read(`{"ok":true,"job_id":"${JOB}","duplicate":true}`)).toEqual({ ok: true, job_id: JOB, duplicate: true });
    expect(read('{"error":{"code":"ERR_JOB_IN_FLIGHT","message":"in flight elsewhere"}}')).toEqual({
      error: { code: 'ERR_JOB_IN_FLIGHT', message: 'in flight elsewhere' },
    });
    expect(read(' {"error":{"message":"","code":"ERR_A"}}\n')).toEqual({ error: { code: 'ERR_A', message: '' } });
  });

  it.each([
    ['another job id', `{"ok":true,"job_id":"other","duplicate":false}`],
    ['ok false', `{"ok":false,"job_id":"${JOB}","duplicate":false}`],
    ['duplicate not boolean', `{"ok":true,"job_id":"${JOB}","duplicate":"no"}`],
    ['an extra member', `{"ok":true,"job_id":"${JOB}","duplicate":false,"x":1}`],
    ['a missing member', `{"ok":true,"job_id":"${JOB}"}`],
    ['code in lower case', '{"error":{"code":"err_x","message":"m"}}'],
    ['code not ERR_', '{"error":{"code":"SECRET_VALUE","message":"m"}}'],
    ['code with digits', '{"error":{"code":"ERR_1234","message":"m"}}'],
    ['message not a string', '{"error":{"code":"ERR_X","message":{"a":1}}}'],
    ['message too long', `{"error":{"code":"ERR_X","message":"${'m'.repeat(501)}"}}`],
    ['message with a newline', '{"error":{"code":"ERR_X","message":"a\\nb"}}'],
    ['error with an extra member', '{"error":{"code":"ERR_X","message":"m","detail":"d"}}'],
    ['error not an object', '{"error":"ERR_X"}'],
    ['an array', '[1]'],
    ['not JSON', 'ok'],
    ['empty', ''],
  ])('refuses %s', (_name, text) => {
    expect(read(text)).toBeNull();
  });

  it('refuses a body over 1 KB, an incomplete body, and invalid UTF-8', () => {
    const padded = `{"error":{"code":"ERR_X","message":"m"}}${' '.repeat(1024)}`;
    expect(read(padded)).toBeNull();
    expect(read('{"error":{"code":"ERR_X","message":"m"}}', false)).toBeNull();
    expect(read(Buffer.concat([Buffer.from('{"error":{"code":"ERR_X","message":"'), Buffer.from([0xff]), Buffer.from('"}}')]))).toBeNull();
  });
});
