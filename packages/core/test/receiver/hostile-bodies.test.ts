/**
 * Bodies built to cost the receiver work (each ~1 MB, under the default 1 MiB limit), sent with a
 * made-up signature, with a signature the key made over something else (anyone who ever received a
 * delivery has one), and signed for real. Which code answers shows where each was stopped: a
 * signature no key decodes before the body is parsed, an oversized canonical form by the parse's
 * bound before anything is serialized. Timings are the `attack` bench group's, not asserted here.
 */
import { constants, createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createReceiver, type ReceiverResponse } from '../../src/index.js';
import { canonicalize } from '../../src/canonical/index.js';
import { createTestKeyPair } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const MB = 1_000_000;
const ENVELOPE =
  '"event":"async_job_completed","job_id":"45ef7cef-bf17-4f78-a427-906ce7e8711c","status":"success",' +
  '"feature":"ocr","subfeature":"ocr_async","provider":"amazon","model":null,' +
  `"created_at":"${new Date().toISOString()}","finished_at":"${new Date().toISOString()}","output":{}`;

function repeatTo(unit: string, bytes: number): string {
  return Array(Math.floor(bytes / (unit.length + 1)))
    .fill(unit)
    .join(',');
}

const SHAPES = {
  'deep nesting (1,000 × 500 nested arrays)': `{${ENVELOPE},"pad":[${repeatTo('['.repeat(500) + ']'.repeat(500), MB)}]}`,
  'many empty arrays': `{${ENVELOPE},"pad":[${repeatTo('[]', MB)}]}`,
  'many small objects': `{${ENVELOPE},"pad":[${repeatTo('{"a":1}', MB)}]}`,
  'one object with 60k keys': `{${ENVELOPE},"pad":{${Array.from({ length: 60_000 }, (_, i) => `"k${i}":${i}`).join(',')}}}`,
  'a long escaped string': `{${ENVELOPE},"pad":"${'\\u00e9'.repeat(MB / 6)}"}`,
  'many 17-digit floats': `{${ENVELOPE},"pad":[${repeatTo('0.12345678901234567', MB)}]}`,
} as const;
type Shape = keyof typeof SHAPES;

/** Over the default canonical limit (16 × 1 MiB): refused by the parse's bound whatever is signed. */
const OVER_CANONICAL_LIMIT: ReadonlySet<Shape> = new Set(['deep nesting (1,000 × 500 nested arrays)']);

function rsaSign(message: string): string {
  return sign('sha256', Buffer.from(message, 'latin1'), { key: keys.privateKey, padding: constants.RSA_PKCS1_PADDING }).toString('hex');
}

function send(body: Buffer, signature: string): Promise<ReceiverResponse> {
  return receiver.handle({
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': signature },
    rawBody: body,
  });
}

const handled: string[] = [];
const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: (e) => void handled.push(e.job_id) });
const made = 'ab'.repeat(256);
const decodesElsewhere = rsaSign(createHash('sha256').update('another body').digest('hex'));

describe('hostile bodies', () => {
  it('are each within the body limit, so only the order of work can stop them', () => {
    for (const text of Object.values(SHAPES)) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024 * 1024);
  });

  it.each(Object.keys(SHAPES) as Shape[])(
    '%s, made-up signature: 401 ERR_SIGNATURE_INVALID (no key decodes it; body never parsed)',
    async (shape) => {
      const res = await send(Buffer.from(SHAPES[shape]), made);
      expect(res.status).toBe(401);
      expect(res.outcome.code).toBe('ERR_SIGNATURE_INVALID');
      expect(JSON.parse(res.body).error.message).toMatch(/not made by any configured key/);
    },
  );

  it.each(Object.keys(SHAPES) as Shape[])('%s, a real signature over another body: 413 by the bound, else 401', async (shape) => {
    const res = await send(Buffer.from(SHAPES[shape]), decodesElsewhere);
    if (OVER_CANONICAL_LIMIT.has(shape)) {
      expect([res.status, res.outcome.code]).toEqual([413, 'ERR_CANONICAL_TOO_LARGE']);
    } else {
      expect([res.status, res.outcome.code]).toEqual([401, 'ERR_SIGNATURE_INVALID']);
      expect(JSON.parse(res.body).error.message).toMatch(/made by a configured key, but not over this body/);
    }
  });

  it.each((Object.keys(SHAPES) as Shape[]).filter((s) => !OVER_CANONICAL_LIMIT.has(s)))(
    '%s, signed by the service: verified and handled once',
    async (shape) => {
      const body = Buffer.from(SHAPES[shape]);
      const signature = rsaSign(createHash('sha256').update(canonicalize(body)).digest('hex'));
      const fresh = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: (e) => void handled.push(e.job_id) });
      handled.length = 0;
      const res = await fresh.handle({
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': signature },
        rawBody: body,
      });
      expect([res.status, res.outcome.kind, res.outcome.profile]).toEqual([200, 'handled', 'python']);
      expect(handled).toEqual(['45ef7cef-bf17-4f78-a427-906ce7e8711c']);
    },
  );

  it('the deep-nesting body is refused with 413 even when the service signed it (its canonical form is ~500 MB)', async () => {
    // Signed over a digest computed elsewhere: the canonical form itself is too large to build here.
    const res = await send(Buffer.from(SHAPES['deep nesting (1,000 × 500 nested arrays)']), rsaSign('0'.repeat(64)));
    expect([res.status, res.outcome.code]).toEqual([413, 'ERR_CANONICAL_TOO_LARGE']);
    expect(JSON.parse(res.body).error.message).toMatch(/canonical form of this body may reach \d+ bytes; the limit is 16777216/);
  });

  it('costs the process less than 300 MB of RSS over every shape and signature', async () => {
    const rss = process.memoryUsage().rss;
    for (const text of Object.values(SHAPES)) {
      const body = Buffer.from(text);
      await send(body, made);
      await send(body, decodesElsewhere);
    }
    expect(process.memoryUsage().rss - rss).toBeLessThan(300 * 2 ** 20);
  });
});
