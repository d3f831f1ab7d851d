/**
 * The receiver's side of the diagnosis: each refusal's log line carries the cheap cause (header
 * causes, unknown-key with the key ids tried, body-malformed, body-mismatch with the key that
 * signed), and captureFailures writes refused requests as request files, bounded (the oldest kept, a
 * share of max per cause, writes in flight counted across recounts),
 * header values kept from an allow-list and bodies whole, that diagnoseDelivery reads back to the same cause.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { constructEvent, createFetchHandler, createJsonLogger, createReceiver, JobhookError, type Logger } from '../../src/index.js';
import { diagnoseDelivery } from '../../src/diagnosis/index.js';
import { HEADER_CAUSE_CODE } from '../../src/signature/decode-signature.js';
import { BREAK_VARIANTS, breakDelivery, buildTestEvent, createTestKeyPair, type BreakCause } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-captures-'));
  dirs.push(dir);
  return dir;
}

/** The finished capture files in `dir` once no write is in flight (temporary files are dot files ending .tmp). */
async function settledCaptures(dir: string, count: number): Promise<string[]> {
  // One condition: a write not yet started has no temporary file, so "no .tmp" alone can hold too early.
  const settled = (): boolean => {
    const files = readdirSync(dir);
    return files.length === count && files.every((f) => !f.endsWith('.tmp'));
  };
  await expect.poll(settled, { timeout: 10_000 }).toBe(true);
  return readdirSync(dir).sort();
}

function logLines(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { logger: createJsonLogger({ write: (line) => void lines.push(JSON.parse(line)) }), lines };
}

function receiverWith(logger: Logger, extra: object = {}) {
  return createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger, ...extra });
}

/** A broken delivery as receiver.handle takes it, with lower-case headers and a secret one. */
function brokenRequest(cause: BreakCause, variant = 0) {
  const broken = breakDelivery(buildTestEvent(), cause, { privateKey: keys.privateKey, variant });
  const headers: Record<string, string> = { authorization: 'Bearer sk_live_secret', 'x-api-key': 'k-123', cookie: 'session=abc' };
  for (const [name, value] of Object.entries(broken.headers)) headers[name.toLowerCase()] = value;
  return { method: 'POST', headers, rawBody: broken.body };
}

describe('refusal log lines carry the cheap cause', () => {
  const expected: Array<[BreakCause, number, Record<string, unknown>]> = [
    ['hash-algorithm', 0, { code: 'ERR_HASH_ALGORITHM_UNSUPPORTED', cause: 'hash-algorithm' }],
    ['signature-missing', 0, { code: 'ERR_SIGNATURE_MISSING', cause: 'signature-missing' }],
    ['signature-elsewhere', 1, { code: 'ERR_SIGNATURE_MISSING', cause: 'signature-elsewhere', header: 'x-hub-signature-256' }],
    ['signature-malformed', 0, { code: 'ERR_SIGNATURE_MALFORMED', cause: 'signature-malformed', shape: 'prefixed' }],
    ['unknown-key', 0, { code: 'ERR_SIGNATURE_INVALID', cause: 'unknown-key', keyIdsTried: [expect.stringMatching(/^[0-9a-f]{64}$/)] }],
    ['unknown-key', 2, { code: 'ERR_SIGNATURE_MALFORMED', cause: 'unknown-key', keyIdsTried: [expect.any(String)], signatureBits: 3072 }],
    ['body-malformed', 0, { code: 'ERR_BODY_MALFORMED', cause: 'body-malformed' }],
    ['body-reserialized', 0, { code: 'ERR_SIGNATURE_INVALID', cause: 'body-mismatch', keyId: expect.stringMatching(/^[0-9a-f]{64}$/) }],
    ['body-transcoded', 0, { code: 'ERR_SIGNATURE_INVALID', cause: 'body-mismatch' }],
    ['body-modified', 0, { code: 'ERR_SIGNATURE_INVALID', cause: 'body-mismatch' }],
  ];
  it.each(expected)('%s (variant %i)', async (cause, variant, fields) => {
    const { logger, lines } = logLines();
    const receiver = receiverWith(logger);
    const res = await receiver.handle(brokenRequest(cause, variant));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, kind: 'rejected', ...fields });
    // The answer to the sender says nothing of the cause.
    expect(res.body).not.toMatch(/cause|keyId/);
  });

  // One classifier of the signature headers: the receiver, constructEvent and the diagnosis never disagree.
  const headerCases = (['hash-algorithm', 'signature-missing', 'signature-elsewhere', 'signature-malformed'] as const).flatMap((cause) =>
    BREAK_VARIANTS[cause].map((variant, n) => [cause, variant, n] as const),
  );
  it.each(headerCases)('header cause %s/%s: one cause and one code everywhere', async (cause, _variant, n) => {
    const request = brokenRequest(cause, n);
    const { logger, lines } = logLines();
    const res = await receiverWith(logger).handle(request);
    const diagnosed = diagnoseDelivery({ headers: request.headers, body: request.rawBody }, { publicKeys: keys.publicKeyPem });
    expect(diagnosed.cause).toBe(cause);
    const code = HEADER_CAUSE_CODE[cause];
    expect(res.status).toBe(401);
    expect(lines[0]).toMatchObject({ code, cause });
    let thrown: unknown;
    try {
      constructEvent(request.rawBody, request.headers, keys.publicKeyPem);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(JobhookError);
    expect((thrown as JobhookError).code).toBe(code);
  });

  it('a blank signature header is signature-missing (ERR_SIGNATURE_MISSING) for the receiver and the diagnosis', async () => {
    const request = brokenRequest('signature-missing', BREAK_VARIANTS['signature-missing'].indexOf('empty'));
    const { logger, lines } = logLines();
    await receiverWith(logger).handle({ ...request, headers: { ...request.headers, 'x-service-signature': '  ' } });
    expect(lines[0]).toMatchObject({ code: 'ERR_SIGNATURE_MISSING', cause: 'signature-missing' });
    expect(diagnoseDelivery({ headers: request.headers, body: request.rawBody }, { publicKeys: keys.publicKeyPem })).toMatchObject({
      cause: 'signature-missing',
      message: expect.stringContaining('X-Service-Signature is empty'),
    });
  });

  it('refusals that are not signature or body failures carry no cause', async () => {
    const { logger, lines } = logLines();
    const receiver = receiverWith(logger);
    await receiver.handle({ ...brokenRequest('body-modified'), method: 'GET' });
    expect(lines[0]).toMatchObject({ code: 'ERR_METHOD_NOT_ALLOWED' });
    expect(lines[0]).not.toHaveProperty('cause');
  });
});

describe('captureFailures', () => {
  it('writes each refused request as a request file the diagnosis reads back to its cause', async () => {
    const dir = tempDir();
    const receiver = receiverWith(logLines().logger, { captureFailures: { dir } });
    const causes: BreakCause[] = ['signature-elsewhere', 'unknown-key', 'body-reserialized', 'body-transcoded', 'body-malformed'];
    for (const cause of causes) await receiver.handle(brokenRequest(cause));
    const files = await settledCaptures(dir, causes.length);
    expect(files.every((f) => /^failure-.+\.json$/.test(f))).toBe(true); // no temporary file left
    const diagnosed = files.map((f) => {
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
      const record = JSON.parse(readFileSync(join(dir, f), 'utf8')) as {
        method: string;
        headers: Record<string, string>;
        body_b64: string;
        cause: string;
      };
      expect(record.headers['authorization']).toBe('[dropped]');
      expect(record.headers['x-api-key']).toBe('[dropped]');
      expect(record.headers['cookie']).toBe('[dropped]');
      expect(JSON.stringify(record)).not.toMatch(/sk_live_secret|k-123|session=abc/);
      return diagnoseDelivery(
        { method: record.method, headers: record.headers, body: Buffer.from(record.body_b64, 'base64') },
        { publicKeys: keys.publicKeyPem },
      ).cause;
    });
    expect(diagnosed.sort()).toEqual([...causes].sort());
  });

  it('keeps the oldest: at most max files, later failures dropped with one warning', async () => {
    const dir = tempDir();
    const { logger, lines } = logLines();
    const receiver = receiverWith(logger, { captureFailures: { dir, max: 3 } });
    const order: BreakCause[] = [
      'hash-algorithm',
      'signature-missing',
      'body-malformed',
      'body-modified',
      'unknown-key',
      'signature-malformed',
    ];
    for (const cause of order) await receiver.handle(brokenRequest(cause));
    await expect.poll(() => lines.some((l) => String(l['msg']).includes('captureFailures'))).toBe(true);
    const kept = (await settledCaptures(dir, 3)).map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { cause: string }).cause);
    expect(kept.sort()).toEqual(['body-malformed', 'hash-algorithm', 'signature-missing']);
    expect(lines.filter((l) => String(l['msg']).includes('captureFailures'))).toHaveLength(1);
  });

  it('counts files already in the directory, and leaves out bodies over maxBodyBytes', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'failure-earlier.json'), '{}');
    const receiver = receiverWith(logLines().logger, { captureFailures: { dir, max: 2, maxBodyBytes: 10 } });
    await receiver.handle(brokenRequest('body-modified'));
    await receiver.handle(brokenRequest('body-modified'));
    const [mine] = (await settledCaptures(dir, 2)).filter((f) => f !== 'failure-earlier.json');
    const record = JSON.parse(readFileSync(join(dir, mine!), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({
      body_b64: '',
      body_omitted: expect.any(Number),
      status: 401,
      code: 'ERR_SIGNATURE_INVALID',
      cause: 'body-mismatch',
    });
  });

  it("an adapter's header check refuses before the body is read: the capture has the headers, no body", async () => {
    const dir = tempDir();
    const handler = createFetchHandler(receiverWith(logLines().logger, { captureFailures: { dir } }));
    const broken = breakDelivery(buildTestEvent(), 'signature-elsewhere', { privateKey: keys.privateKey });
    const res = await handler(new Request('http://localhost/hooks', { method: 'POST', headers: broken.headers, body: broken.body }));
    expect(res.status).toBe(401);
    const [file] = await settledCaptures(dir, 1);
    const record = JSON.parse(readFileSync(join(dir, file!), 'utf8')) as {
      headers: Record<string, string>;
      body_b64: string;
    };
    expect(record).toMatchObject({
      body_b64: '',
      body_read: false,
      cause: 'signature-elsewhere',
      headers: { 'x-signature': expect.any(String) },
    });
    const d = diagnoseDelivery({ headers: record.headers, body: Buffer.alloc(0) }, { publicKeys: keys.publicKeyPem });
    expect(d).toMatchObject({ cause: 'signature-elsewhere', detail: { header: 'x-signature' } });
  });

  it('gives each cause a share of max: a flood of one cause leaves room for the others', async () => {
    const dir = tempDir();
    const receiver = receiverWith(logLines().logger, { captureFailures: { dir, max: 14 } }); // 2 per cause
    await Promise.all(Array.from({ length: 30 }, () => receiver.handle(brokenRequest('signature-missing'))));
    await receiver.handle(brokenRequest('body-modified'));
    await receiver.handle(brokenRequest('unknown-key'));
    const causes = (): string[] =>
      readdirSync(dir)
        .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { cause: string }).cause)
        .sort();
    await settledCaptures(dir, 4);
    expect(causes()).toEqual(['body-mismatch', 'signature-missing', 'signature-missing', 'unknown-key']);
    expect(readdirSync(dir).every((f) => /^failure-(signature-missing|body-mismatch|unknown-key)-.+\.json$/.test(f))).toBe(true);
  });

  it('never lets the five causes anyone can send fill max: a signed body that does not match still finds room', async () => {
    const dir = tempDir();
    // max 15: 2 per cause (rounded down), so the anonymous causes hold at most 10 of the 15.
    const receiver = receiverWith(logLines().logger, { captureFailures: { dir, max: 15 } });
    const anonymous = ['hash-algorithm', 'signature-missing', 'signature-elsewhere', 'signature-malformed', 'unknown-key'] as const;
    for (const cause of anonymous) {
      await Promise.all(Array.from({ length: 5 }, () => receiver.handle(brokenRequest(cause))));
    }
    await settledCaptures(dir, 10);
    await receiver.handle(brokenRequest('body-modified'));
    await settledCaptures(dir, 11);
    expect(readdirSync(dir).filter((f) => f.startsWith('failure-body-mismatch-'))).toHaveLength(1);
  });

  describe('recounts', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('counts the directory again a minute after it was full, dropping (and counting) what arrives meanwhile', async () => {
      vi.useFakeTimers({ toFake: ['performance'] });
      const dir = tempDir();
      const { logger, lines } = logLines();
      const receiver = receiverWith(logger, { captureFailures: { dir, max: 7 } }); // 1 per cause
      await receiver.handle(brokenRequest('signature-missing'));
      await settledCaptures(dir, 1);
      for (const f of readdirSync(dir)) rmSync(join(dir, f));
      await receiver.handle(brokenRequest('signature-missing')); // still counted full: not written
      vi.advanceTimersByTime(60_000);
      await receiver.handle(brokenRequest('signature-missing')); // starts the recount, dropped
      await expect.poll(() => lines.some((l) => l['dropped'] === 2)).toBe(true);
      await receiver.handle(brokenRequest('signature-missing'));
      await settledCaptures(dir, 1);
      expect(lines.filter((l) => String(l['msg']).includes('not written until some are deleted'))).toHaveLength(1);
    });

    it('a recount while writes are in flight never lets the files pass the share', async () => {
      vi.useFakeTimers({ toFake: ['performance'] });
      const dir = tempDir();
      const receiver = receiverWith(logLines().logger, { captureFailures: { dir, max: 14 } }); // 2 per cause
      for (let round = 0; round < 20; round++) {
        vi.advanceTimersByTime(60_000); // every refusal for room may start a recount
        await Promise.all(Array.from({ length: 5 }, () => receiver.handle(brokenRequest('signature-missing'))));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await settledCaptures(dir, 2);
    });
  });

  it('refuses a dir it cannot create at construction', () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    expect(() => receiverWith(logLines().logger, { captureFailures: { dir: join(file, 'captures') } })).toThrow(
      expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringContaining('captureFailures.dir') }),
    );
  });

  it('refuses bad options at construction', () => {
    const bad = [null, {}, { dir: '' }, { dir: '/tmp/x', max: 0 }, { dir: '/tmp/x', max: 1.5 }, { dir: '/tmp/x', maxBodyBytes: -1 }];
    for (const captureFailures of bad) {
      expect(() => receiverWith(logLines().logger, { captureFailures })).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    }
  });
});
