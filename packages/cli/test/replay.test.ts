/**
 * `jobhook replay` and the doctor on recordings (the BUILT binary, spawned): recordings of a
 * receiver's `record` sent again byte for byte to a fresh receiver over HTTP, one JSON line per
 * answer; the exit code; a recording older than the receiver's replay window refused; a file that is
 * not a recording refused before anything is sent. And the doctor's and verify's small details:
 * no guess at a body a capture did not keep, the one-key wording, each number once with the form
 * Python wrote, verify pointing to the doctor.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReceiver, silentLogger, type Receiver } from '@jobhook/core';
import { breakDelivery, buildSignedRequest, buildTestEvent, createTestKeyPair } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJobhook as jobhook, serveReceiver, type ReceiverServer } from './helpers/jobhook-process.js';

const keys = createTestKeyPair();
let dir: string;
let keyFile: string;
const receivers: Receiver[] = [];
const servers: ReceiverServer[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'jobhook-replay-'));
  keyFile = join(dir, 'service.pem');
  writeFileSync(keyFile, keys.publicKeyPem);
});
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const r of receivers) await r.close();
  rmSync(dir, { recursive: true, force: true });
});

function receiver(options: { record?: { dir: string }; maxEventAgeMs?: number } = {}): Receiver {
  const r = createReceiver({ publicKeys: keys.publicKeyPem, logger: silentLogger, onEvent: () => {}, ...options });
  receivers.push(r);
  return r;
}

async function served(r: Receiver): Promise<string> {
  const server = await serveReceiver(() => r);
  servers.push(server);
  return server.url;
}

/** Records `requests` through a receiver with `record`; resolves with the directory once all are written. */
async function record(name: string, requests: ReturnType<typeof buildSignedRequest>[]): Promise<string> {
  const recordings = join(dir, name);
  const r = receiver({ record: { dir: recordings } });
  for (const request of requests) expect((await r.handle(request)).status).toBe(200);
  await expect
    .poll(() => readdirSync(recordings).filter((f) => /^delivery-.+\.json$/.test(f)).length, { timeout: 10_000 })
    .toBe(requests.length);
  return recordings;
}

const lines = (out: string): Array<Record<string, unknown>> =>
  out
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('jobhook replay', () => {
  it('sends a directory of recordings to a fresh receiver (handled), then again (duplicates); exit 0', async () => {
    const requests = [
      buildSignedRequest({}, { privateKey: keys.privateKey }),
      buildSignedRequest({ status: 'fail' }, { privateKey: keys.privateKey }),
    ];
    const recordings = await record('two', requests);
    const url = await served(receiver());
    const first = await jobhook(['replay', recordings, '--url', url]);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    const ids = requests.map((r) => r.event.job_id).sort();
    expect(lines(first.out).map((l) => [l['status'], l['code'], l['duplicate']])).toEqual([
      [200, null, false],
      [200, null, false],
    ]);
    expect(
      lines(first.out)
        .map((l) => l['jobId'])
        .sort(),
    ).toEqual(ids);
    expect(lines(first.out).every((l) => String(l['file']).startsWith(recordings))).toBe(true);
    const again = await jobhook(['replay', ...readdirSync(recordings).map((f) => join(recordings, f)), '--url', url]);
    expect(again.code).toBe(0);
    expect(lines(again.out).map((l) => l['duplicate'])).toEqual([true, true]);
  });

  it('a recording older than the receiver’s replay window: 400 ERR_EVENT_TOO_OLD, exit 1', async () => {
    const old = new Date(Date.now() - 2 * 3_600_000).toISOString().replace('Z', '+00:00');
    const recordings = join(dir, 'old');
    // Recorded by a receiver that admits it (no window), replayed to one with a one-hour window.
    const r = createReceiver({
      publicKeys: keys.publicKeyPem,
      logger: silentLogger,
      onEvent: () => {},
      maxEventAgeMs: false,
      record: { dir: recordings },
    });
    receivers.push(r);
    expect((await r.handle(buildSignedRequest({ created_at: old, finished_at: old }, { privateKey: keys.privateKey }))).status).toBe(200);
    await expect.poll(() => readdirSync(recordings).length, { timeout: 10_000 }).toBe(1);
    const run = await jobhook(['replay', recordings, '--url', await served(receiver({ maxEventAgeMs: 3_600_000 }))]);
    expect(run.code).toBe(1);
    expect(lines(run.out)).toEqual([expect.objectContaining({ status: 400, code: 'ERR_EVENT_TOO_OLD' })]);
  });

  it('a file that is not a recording (a capture of a refused request) stops the run before anything is sent: exit 2', async () => {
    const good = await record('one', [buildSignedRequest({}, { privateKey: keys.privateKey })]);
    const capture = join(dir, 'failure.json');
    writeFileSync(
      capture,
      JSON.stringify({ method: 'POST', headers: {}, body_b64: '', body_read: false, captured_at: new Date().toISOString() }),
    );
    const target = receiver();
    const run = await jobhook(['replay', good, capture, '--url', await served(target)]);
    expect(run.code).toBe(2);
    expect(run.err).toContain('no "arrived_at"');
    expect(run.out).toBe('');
    expect(target.stats().received).toBe(0);
    expect(await jobhook(['replay', good])).toMatchObject({ code: 2, err: expect.stringContaining('--url URL is required') });
  });
});

describe('jobhook doctor on recordings and captures', () => {
  it('reads a recording: verified, exit 0', async () => {
    const recordings = await record('doctor', [buildSignedRequest({}, { privateKey: keys.privateKey })]);
    const file = join(recordings, readdirSync(recordings)[0]!);
    const run = await jobhook(['doctor', '--public-key', keyFile, '--request', file, '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ verified: true, cause: 'verified' });
  });

  it('a signature-elsewhere capture without its body: no guess at the body once fixed', async () => {
    const moved = breakDelivery(buildTestEvent(), 'signature-elsewhere', { privateKey: keys.privateKey, variant: 1 });
    const file = join(dir, 'elsewhere-no-body.json');
    writeFileSync(file, JSON.stringify({ method: 'POST', headers: moved.headers, body_b64: '', body_read: false }));
    const run = await jobhook(['doctor', '--public-key', keyFile, '--request', file, '--json']);
    expect(run.code).toBe(1);
    const d = JSON.parse(run.out) as { cause: string; message: string; detail: Record<string, unknown>; keyId: string };
    expect(d.cause).toBe('signature-elsewhere');
    expect(d.detail).not.toHaveProperty('onceFixed');
    expect(d.message).toMatch(/the body was not kept, so whether it verifies cannot be told/);
    expect(d.keyId).toMatch(/^[0-9a-f]+$/);
    // With its body, the same capture still says what the fixed delivery does.
    writeFileSync(file, JSON.stringify({ method: 'POST', headers: moved.headers, body_b64: moved.body.toString('base64') }));
    const withBody = JSON.parse((await jobhook(['doctor', '--public-key', keyFile, '--request', file, '--json'])).out) as {
      detail: object;
    };
    expect(withBody.detail).toMatchObject({ onceFixed: 'verified' });
  });

  it('unknown-key says "the one configured key" for one key, "none of the 2 configured keys" for two', async () => {
    const other = breakDelivery(buildTestEvent(), 'unknown-key', { privateKey: keys.privateKey });
    const file = join(dir, 'unknown-key.json');
    writeFileSync(file, JSON.stringify({ headers: other.headers, body_b64: other.body.toString('base64') }));
    const one = JSON.parse((await jobhook(['doctor', '--public-key', keyFile, '--request', file, '--json'])).out) as { message: string };
    expect(one.message).toMatch(/^the signature decodes under the one configured key \([0-9a-f]{12}\)/);
    expect(one.message).not.toMatch(/none of the 1 /);
    const second = join(dir, 'second.pem');
    writeFileSync(second, createTestKeyPair(3072).publicKeyPem);
    const two = JSON.parse(
      (await jobhook(['doctor', '--public-key', keyFile, '--public-key', second, '--request', file, '--json'])).out,
    ) as {
      message: string;
    };
    expect(two.message).toMatch(/^the signature decodes under none of the 2 configured keys \(/);
  });

  it('body-reserialized lists each number once, with the form a Python float of it takes', async () => {
    // The test event has `pages: 1`; the break adds `score: 1.0`: both read `1` once re-serialized.
    const broken = breakDelivery(buildTestEvent(), 'body-reserialized', { privateKey: keys.privateKey, variant: 0 });
    const file = join(dir, 'reserialized.json');
    writeFileSync(file, JSON.stringify({ headers: broken.headers, body_b64: broken.body.toString('base64') }));
    const d = JSON.parse((await jobhook(['doctor', '--public-key', keyFile, '--request', file, '--json'])).out) as {
      cause: string;
      message: string;
      detail: { numbers: string[] };
    };
    expect(d.cause).toBe('body-reserialized');
    expect(d.detail.numbers).toEqual(['1']);
    expect(d.message).toContain('(1 (Python writes the float 1.0))');
    expect(d.message).not.toContain('1, 1');
  });

  it('verify on a re-serialized body points to the doctor', async () => {
    const broken = breakDelivery(buildTestEvent(), 'body-reserialized', { privateKey: keys.privateKey, variant: 0 });
    const body = join(dir, 'reserialized-body.json');
    writeFileSync(body, broken.body);
    const run = await jobhook([
      'verify',
      '--public-key',
      keyFile,
      '--signature',
      broken.headers['X-Service-Signature'] ?? '',
      '--body',
      body,
    ]);
    expect(run.code).toBe(1);
    const line = JSON.parse(run.out) as { code: string; message: string };
    expect(line.code).toBe('ERR_SIGNATURE_INVALID');
    expect(line.message).toContain('jobhook doctor --public-key FILE --request FILE');
  });
});
