/**
 * `record`: every delivery whose signature verified is kept, byte for byte, in the request-file form
 * (`jobhook doctor --request` reads it, `jobhook replay` and `loadRecording` send it again), without
 * a credential header's value, in 0600 files, the newest `max` kept, and never making the answer wait
 * on the disk.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFile, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createJsonLogger, createReceiver, type Logger, type Receiver, type ReceiverOptions } from '../../src/index.js';
import { diagnoseDelivery, sendRecording, type Recording } from '../../src/diagnosis/index.js';
import { buildSignedRequest, createTestKeyPair, deliverRecording, loadRecording } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const dirs: string[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-record-'));
  dirs.push(dir);
  return dir;
}

/** A logger whose lines the test reads. */
function captureLog(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { logger: createJsonLogger({ write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
}

function recordingReceiver(dir: string, options: Partial<ReceiverOptions> & { max?: number } = {}): Receiver {
  const { max, ...rest } = options;
  const receiver = createReceiver({
    publicKeys: keys.publicKeyPem,
    logger: captureLog().logger,
    onEvent: () => {},
    record: { dir, ...(max === undefined ? {} : { max }) },
    ...rest,
  });
  receivers.push(receiver);
  return receiver;
}

/** The recordings of `dir` once exactly `count` are there and none is being written, parsed, oldest first. */
async function recordings(dir: string, count: number): Promise<Array<Record<string, unknown>>> {
  const files = (): string[] => readdirSync(dir).sort();
  await expect.poll(() => files().length === count && files().every((f) => /^delivery-.+\.json$/.test(f)), { timeout: 10_000 }).toBe(true);
  return files().map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>);
}

/**
 * Runs `during` with every libuv thread blocked in open() of a FIFO no one writes, so no file
 * operation can finish (a stuck disk); then unblocks them: a writer opens and closes each FIFO.
 */
async function whileDiskStuck(during: () => Promise<void>): Promise<void> {
  const threads = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
  const fifos = Array.from({ length: threads }, (_, i) => join(tempDir(), `stuck-${i}`));
  for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
  const blocked = fifos.map((fifo) => new Promise((resolve) => readFile(fifo, resolve)));
  try {
    await during();
  } finally {
    for (const fifo of fifos) closeSync(openSync(fifo, 'w'));
    await Promise.all(blocked);
  }
}

describe('record', () => {
  it('keeps a verified delivery byte for byte: body, the service’s headers, arrival, the answer; files 0600 in a 0700 dir', async () => {
    const dir = join(tempDir(), 'recordings');
    const receiver = recordingReceiver(dir);
    const request = buildSignedRequest({ status: 'success' }, { privateKey: keys.privateKey });
    const before = Date.now();
    const answer = await receiver.handle(request);
    expect(answer.status).toBe(200);
    const [file] = await recordings(dir, 1);
    expect(Buffer.from(String(file!['body_b64']), 'base64').equals(request.rawBody)).toBe(true);
    expect(file).toMatchObject({
      method: 'POST',
      status: 200,
      kind: 'handled',
      job_id: request.event.job_id,
      headers: {
        'x-service-signature': request.headers['x-service-signature'],
        'x-service-hash-algorithm': request.headers['x-service-hash-algorithm'],
        'content-type': 'application/json',
        'user-agent': 'jobhook-test',
      },
    });
    const arrived = Date.parse(String(file!['arrived_at']));
    expect(arrived).toBeGreaterThanOrEqual(before);
    expect(arrived).toBeLessThanOrEqual(Date.now());
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    // The doctor reads it as it is.
    expect(
      diagnoseDelivery({ headers: file!['headers'] as Record<string, string>, body: request.rawBody }, { publicKeys: keys.publicKeyPem })
        .verified,
    ).toBe(true);
  });

  it('never keeps a credential header’s value: Authorization, Cookie, a proxy’s identity token are kept by name only', async () => {
    const dir = tempDir();
    const receiver = recordingReceiver(dir);
    const request = buildSignedRequest({}, { privateKey: keys.privateKey });
    const secrets = {
      authorization: 'Bearer sk_live_AUTHSECRET0123456789',
      cookie: 'session=COOKIESECRET0123456789',
      'x-goog-iap-jwt-assertion': 'eyJhbGciOiJFUzI1NiJ9.IAPSECRET0123456789.c2ln',
    };
    expect((await receiver.handle({ ...request, headers: { ...request.headers, ...secrets } })).status).toBe(200);
    const [file] = await recordings(dir, 1);
    const text = JSON.stringify(file);
    for (const secret of ['AUTHSECRET', 'COOKIESECRET', 'IAPSECRET']) expect(text).not.toContain(secret);
    expect(file!['headers']).toMatchObject({ authorization: '[dropped]', cookie: '[dropped]', 'x-goog-iap-jwt-assertion': '[dropped]' });
    // A replay sends no placeholder: the loader leaves those headers out.
    const loaded = loadRecording(join(dir, readdirSync(dir)[0]!));
    expect(Object.keys(loaded.headers).sort()).toEqual(
      ['content-length', 'content-type', 'user-agent', 'x-service-hash-algorithm', 'x-service-signature', 'x-service-webhook'].filter(
        (name) => name in (file!['headers'] as Record<string, string>),
      ),
    );
  });

  it('keeps only what verified: a forged delivery is not recorded, a verified one refused as too old is, with its answer', async () => {
    const dir = tempDir();
    const receiver = recordingReceiver(dir, { maxEventAgeMs: 60_000 });
    const forged = buildSignedRequest({}, { privateKey: keys.privateKey });
    const tampered = Buffer.from(forged.rawBody.toString('utf8').replace('Hello, world', 'Hello, there'));
    expect((await receiver.handle({ ...forged, rawBody: tampered })).status).toBe(401);
    const old = new Date(Date.now() - 3_600_000).toISOString().replace('Z', '+00:00');
    const late = buildSignedRequest({ finished_at: old, created_at: old }, { privateKey: keys.privateKey });
    expect((await receiver.handle(late)).status).toBe(400);
    const [file] = await recordings(dir, 1);
    expect(file).toMatchObject({ status: 400, kind: 'rejected', code: 'ERR_EVENT_TOO_OLD', job_id: late.event.job_id });
  });

  it('keeps the newest `max`: older recordings are deleted', async () => {
    const dir = tempDir();
    const receiver = recordingReceiver(dir, { max: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const request = buildSignedRequest({}, { privateKey: keys.privateKey });
      ids.push(request.event.job_id);
      expect((await receiver.handle(request)).status).toBe(200);
    }
    await expect
      .poll(() => readdirSync(dir).length === 3 && readdirSync(dir).every((f) => !f.endsWith('.tmp')), { timeout: 10_000 })
      .toBe(true);
    const kept = (await recordings(dir, 3)).map((f) => f['job_id']);
    expect(kept.sort()).toEqual(ids.slice(2).sort());
    // A new receiver on the same dir goes on from what is there: the earlier run's oldest go first.
    const next = recordingReceiver(dir, { max: 3 });
    const sixth = buildSignedRequest({}, { privateKey: keys.privateKey });
    expect((await next.handle(sixth)).status).toBe(200);
    await expect
      .poll(
        () =>
          readdirSync(dir).length === 3 && readdirSync(dir).some((f) => readFileSync(join(dir, f), 'utf8').includes(sixth.event.job_id)),
        {
          timeout: 10_000,
        },
      )
      .toBe(true);
    expect((await recordings(dir, 3)).map((f) => f['job_id']).sort()).toEqual([ids[3], ids[4], sixth.event.job_id].sort());
  });

  it('answers while the disk is stuck: every file-system thread blocked, the answer still comes, the file later', async () => {
    const dir = tempDir();
    const receiver = recordingReceiver(dir);
    await whileDiskStuck(async () => {
      const answer = await receiver.handle(buildSignedRequest({}, { privateKey: keys.privateKey }));
      expect(answer.status).toBe(200);
      expect(readdirSync(dir)).toEqual([]);
    });
    await recordings(dir, 1);
  });

  it('a disk slower than the deliveries: at most 64 recordings held in memory, the rest dropped and logged', async () => {
    const dir = tempDir();
    const { logger, lines } = captureLog();
    const receiver = recordingReceiver(dir, { logger });
    const requests = Array.from({ length: 70 }, () => buildSignedRequest({}, { privateKey: keys.privateKey }));
    await whileDiskStuck(async () => {
      for (const request of requests) expect((await receiver.handle(request)).status).toBe(200);
      // Let the queued recordings start their (stuck) writes.
      await new Promise((resolve) => setImmediate(resolve));
    });
    const kept = await recordings(dir, 64);
    expect(new Set(kept.map((f) => f['job_id'])).size).toBe(64);
    expect(lines.filter((l) => String(l['msg']).includes('record dropped recordings'))).toHaveLength(1);
  });

  it('a directory that becomes unwritable: every answer still 200, the failure logged once', async () => {
    const dir = join(tempDir(), 'recordings');
    const { logger, lines } = captureLog();
    const receiver = recordingReceiver(dir, { logger });
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'not a directory any more');
    for (let i = 0; i < 3; i++) {
      expect((await receiver.handle(buildSignedRequest({}, { privateKey: keys.privateKey }))).status).toBe(200);
    }
    const errors = (): Array<Record<string, unknown>> => lines.filter((l) => l['level'] === 'error' || l['level'] === 50);
    await expect.poll(() => errors().length, { timeout: 10_000 }).toBe(1);
    // The directory back: a later recording is written, and by then the three failed writes have long ended.
    rmSync(dir);
    execFileSync('mkdir', ['-m', '700', dir]);
    expect((await receiver.handle(buildSignedRequest({}, { privateKey: keys.privateKey }))).status).toBe(200);
    await recordings(dir, 1);
    expect(errors()).toHaveLength(1);
    expect(String(errors()[0]!['msg'])).toMatch(/record could not write/);
  });

  it('refuses a bad option with a clear message', () => {
    expect(() => createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, record: { dir: '' } })).toThrow(
      /record\.dir must be a directory path/,
    );
    expect(() => createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, record: { dir: tempDir(), max: 0 } })).toThrow(
      /record\.max must be/,
    );
  });
});

describe('loadRecording and deliverRecording', () => {
  it('replays a recording with the clock pinned to its arrival: handled, where the same bytes today are too old', async () => {
    const dir = tempDir();
    const arrival = new Date('2025-03-01T10:00:05.000Z');
    // Recorded on 1 March 2025: the receiver's clock (Date) set there while it took the delivery.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(arrival);
    const recorder = recordingReceiver(dir);
    const sent = buildSignedRequest(
      { created_at: '2025-03-01T09:59:58+00:00', finished_at: '2025-03-01T10:00:04+00:00' },
      { privateKey: keys.privateKey },
    );
    expect((await recorder.handle(sent)).status).toBe(200);
    vi.useRealTimers();
    await recordings(dir, 1);

    const recording = loadRecording(join(dir, readdirSync(dir)[0]!));
    expect(recording.arrivedAt).toEqual(arrival);
    expect(recording.body.equals(sent.rawBody)).toBe(true);
    expect(recording.outcome).toEqual({ status: 200, kind: 'handled', jobId: sent.event.job_id });

    const handled: string[] = [];
    const fresh = (): Receiver => {
      const r = createReceiver({ publicKeys: keys.publicKeyPem, logger: captureLog().logger, onEvent: (e) => void handled.push(e.job_id) });
      receivers.push(r);
      return r;
    };
    // Today the same bytes are older than the replay window.
    const today = await fresh().handle({ method: recording.method, headers: recording.headers, rawBody: recording.body });
    expect(today.outcome.code).toBe('ERR_EVENT_TOO_OLD');
    const replayed = await deliverRecording(fresh(), recording);
    expect(replayed.status).toBe(200);
    expect(handled).toEqual([sent.event.job_id]);
    // The clock is the real one again.
    expect(Date.now()).toBeGreaterThan(arrival.getTime() + 86_400_000);
  });

  it('refuses a file that is not a recording, saying why', () => {
    const dir = tempDir();
    const capture = join(dir, 'failure.json');
    writeFileSync(
      capture,
      JSON.stringify({ method: 'POST', headers: {}, body_b64: '', body_read: false, captured_at: new Date().toISOString() }),
    );
    expect(() => loadRecording(capture)).toThrow(/no "arrived_at"/);
    const omitted = join(dir, 'omitted.json');
    writeFileSync(
      omitted,
      JSON.stringify({
        method: 'POST',
        headers: {},
        body_b64: '',
        body_omitted: 5000000,
        arrived_at: new Date().toISOString(),
        status: 200,
        kind: 'handled',
      }),
    );
    expect(() => loadRecording(omitted)).toThrow(/left out/);
  });

  it('sendRecording refuses a bad url or timeoutMs with a rejection, before sending anything', async () => {
    const recording: Recording = {
      method: 'POST',
      headers: {},
      body: Buffer.from('{}'),
      arrivedAt: new Date(),
      outcome: { status: 200, kind: 'handled' },
    };
    const refused = (message: RegExp): unknown =>
      expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringMatching(message) });
    await expect(sendRecording('ftp://user:secret@example.com/', recording)).rejects.toEqual(
      refused(/^sendRecording: url must be an http: or https: URL, got "ftp:\/\/user:\*\*\*@example\.com\/"$/),
    );
    await expect(sendRecording('not a url', recording)).rejects.toEqual(refused(/url must be an http: or https: URL, got "not a url"/));
    await expect(sendRecording('http://127.0.0.1:1/', recording, { timeoutMs: 0 })).rejects.toEqual(
      refused(/timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got 0/),
    );
    // null means the default: the request is sent (and refused by the closed port), not the option.
    const sent = await sendRecording('http://127.0.0.1:1/', recording, { timeoutMs: null as never }).catch((err: unknown) => err);
    expect(sent).toBeInstanceOf(Error);
    expect((sent as { code?: string }).code).not.toBe('ERR_OPTION_INVALID');
  });
});
