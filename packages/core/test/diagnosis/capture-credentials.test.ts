/**
 * captureFailures keeps an allow-list of header values (issue 21): identity proxies in front of a
 * receiver add credentials under names no deny-list foresees, and a refused request used to write
 * them to disk. The attack: each credential header sent with refused requests of every cause, the
 * capture files read back, no credential value in them. What the diagnosis needs stays: the
 * service's own headers, and a signature sent under another header name.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetchHandler, createReceiver, silentLogger } from '../../src/index.js';
import { diagnoseDelivery } from '../../src/diagnosis/index.js';
import {
  BREAK_VARIANTS,
  breakDelivery,
  buildTestEvent,
  createTestKeyPair,
  signTestEvent,
  type BreakCause,
} from '../../src/testing/index.js';

const keys = createTestKeyPair();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-capture-creds-'));
  dirs.push(dir);
  return dir;
}

interface CaptureRecord {
  method: string;
  headers: Record<string, string | string[]>;
  body_b64: string;
  cause: string;
}

/** The capture files of `dir` once `count` are written and none is in flight, as text. */
async function captures(dir: string, count: number): Promise<string[]> {
  // Written under a temporary name, then renamed: wait for `count` files none of which is still being written.
  await expect
    .poll(() => {
      const files = readdirSync(dir);
      return files.length === count && files.every((f) => !f.endsWith('.tmp'));
    })
    .toBe(true);
  return readdirSync(dir)
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'));
}

const b64url = (text: string): string => Buffer.from(text).toString('base64url');
const jwt = (claims: object): string =>
  `${b64url('{"alg":"ES256","typ":"JWT"}')}.${b64url(JSON.stringify(claims))}.${randomBytes(64).toString('base64url')}`;

/**
 * What identity proxies and browsers put in front of a receiver. Two are shaped to pass a length
 * test: base64 of exactly 256 bytes (the test key's signature length) and 512 hex digits.
 */
const CREDENTIALS: Record<string, string> = {
  authorization: `Bearer ${jwt({ sub: 'svc-billing', scope: 'admin' })}`,
  'proxy-authorization': `Basic ${Buffer.from('proxyuser:hunter2-proxy-pass').toString('base64')}`,
  cookie: `session=${randomBytes(24).toString('hex')}; __Host-csrf=${randomBytes(16).toString('hex')}`,
  'x-goog-iap-jwt-assertion': jwt({ iss: 'https://cloud.google.com/iap', email: 'alice@example.com' }),
  'cf-access-jwt-assertion': jwt({ iss: 'https://acme.cloudflareaccess.com', email: 'bob@example.com' }),
  'x-amzn-oidc-data': jwt({ iss: 'https://cognito-idp.eu-west-1.amazonaws.com/pool', sub: 'carol' }),
  'x-amzn-oidc-identity': 'carol-7d3c1f0e-5b2a-4c7e-9f10-8a6b2c4d1e3f',
  'x-amzn-oidc-accesstoken': jwt({ token_use: 'access', client_id: 'carol-client' }),
  'x-ms-client-principal': Buffer.from(JSON.stringify({ auth_typ: 'aad', claims: [{ typ: 'name', val: 'dave@example.com' }] })).toString(
    'base64',
  ),
  'x-ms-client-principal-name': 'dave@example.com',
  'x-ms-token-aad-id-token': jwt({ aud: 'app', upn: 'dave@example.com' }),
  'x-forwarded-client-cert': `By=spiffe://cluster.local/ns/default/sa/receiver;Hash=${randomBytes(32).toString('hex')};Subject="CN=erin";URI=spiffe://cluster.local/ns/default/sa/erin`,
  'x-api-key': `sk_live_${randomBytes(20).toString('hex')}`,
  // A principal that happens to be base64 of 256 bytes: a signature's length, not a signature.
  'x-ms-client-principal-id': Buffer.from(JSON.stringify({ oid: 'f'.repeat(246) })).toString('base64'),
  // 256 random bytes as hex: 512 digits, as long as a signature hex of a 2048-bit key.
  'x-session-blob': randomBytes(256).toString('hex'),
};

/** Every 24-character window of each credential: none may appear on disk, whole or in part. */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(CREDENTIALS)) {
    for (let i = 0; i + 24 <= value.length; i++) {
      if (text.includes(value.slice(i, i + 24))) {
        found.push(name);
        break;
      }
    }
  }
  return found;
}

function withCredentials(cause: BreakCause, variant = 0) {
  const broken = breakDelivery(buildTestEvent(), cause, { privateKey: keys.privateKey, variant });
  return { method: 'POST', headers: { ...CREDENTIALS, 'user-agent': 'service-webhooks/3.1', ...broken.headers }, rawBody: broken.body };
}

describe('captureFailures writes no credential', () => {
  it('sanity: the shaped ones are a signature’s length', () => {
    expect(Buffer.from(CREDENTIALS['x-ms-client-principal-id']!, 'base64')).toHaveLength(256);
    expect(CREDENTIALS['x-session-blob']).toHaveLength(512);
  });

  it('credential headers sent with refused requests of every cause: names kept, values dropped, the service headers kept', async () => {
    const dir = tempDir();
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger, captureFailures: { dir } });
    const causes: Array<[BreakCause, number]> = [
      ['signature-missing', 0],
      ['signature-elsewhere', 0],
      ['signature-malformed', 0],
      ['hash-algorithm', 0],
      ['unknown-key', BREAK_VARIANTS['unknown-key'].indexOf('random-bytes')],
      ['body-malformed', 0],
      ['body-modified', 0],
    ];
    for (const [cause, variant] of causes)
      expect((await receiver.handle(withCredentials(cause, variant))).status).toBeGreaterThanOrEqual(400);
    const files = await captures(dir, causes.length);
    // With no signature anywhere, the refusal names the first value of a signature's length (a
    // credential) as signature-elsewhere: the capture drops it all the same.
    const expected = [
      'signature-elsewhere',
      'signature-elsewhere',
      'signature-malformed',
      'hash-algorithm',
      'unknown-key',
      'body-malformed',
      'body-mismatch',
    ];
    expect(files.map((f) => (JSON.parse(f) as CaptureRecord).cause).sort()).toEqual(expected.sort());
    for (const text of files) {
      expect(leaks(text)).toEqual([]);
      const { headers } = JSON.parse(text) as CaptureRecord;
      for (const name of Object.keys(CREDENTIALS)) expect(headers[name], name).toBe('[dropped]');
      expect(headers['content-type']).toBe('application/json');
      expect(headers['user-agent']).toBe('service-webhooks/3.1');
    }
    const records = files.map((f) => JSON.parse(f) as CaptureRecord);
    // The service's signature under another name is kept (a configured key decodes it); the
    // request that had none is diagnosed from its capture as what it is: no signature at all.
    const elsewhere = records.filter((r) => r.cause === 'signature-elsewhere');
    const moved = elsewhere.find((r) => r.headers['x-signature'] !== undefined);
    const none = elsewhere.find((r) => r.headers['x-signature'] === undefined);
    expect(moved!.headers['x-signature']).toMatch(/^[0-9a-f]{512}$/);
    expect(none!.headers['x-signature']).toBeUndefined();
    const diagnose = (r: CaptureRecord) =>
      diagnoseDelivery({ headers: r.headers, body: Buffer.from(r.body_b64, 'base64') }, { publicKeys: keys.publicKeyPem }).cause;
    expect([diagnose(moved!), diagnose(none!)]).toEqual(['signature-elsewhere', 'signature-missing']);
    const malformed = records.find((r) => r.cause === 'signature-malformed')!;
    expect(malformed.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{512}$/);
    const hash = records.find((r) => r.cause === 'hash-algorithm')!;
    expect(hash.headers['x-service-hash-algorithm']).not.toBe('[dropped]');
    expect(hash.headers['x-service-webhook']).toBe('true');
  });

  it('the same through a Fetch handler (a fetch Headers object), repeated headers included', async () => {
    const dir = tempDir();
    const handler = createFetchHandler({
      publicKeys: keys.publicKeyPem,
      onEvent: () => {},
      logger: silentLogger,
      captureFailures: { dir },
    });
    const request = withCredentials('unknown-key', BREAK_VARIANTS['unknown-key'].indexOf('random-bytes'));
    const headers = new Headers(request.headers as Record<string, string>);
    headers.append('cookie', 'second=another-cookie-value-123456789');
    const res = await handler(new Request('https://receiver.example/webhook', { method: 'POST', headers, body: String(request.rawBody) }));
    expect(res.status).toBe(401);
    const [text] = await captures(dir, 1);
    expect(leaks(text!)).toEqual([]);
    expect(text).not.toContain('another-cookie-value');
    expect((JSON.parse(text!) as CaptureRecord).headers['x-goog-iap-jwt-assertion']).toBe('[dropped]');
  });
});

describe('a signature sent under another header name is still diagnosed from the capture', () => {
  it.each(BREAK_VARIANTS['signature-elsewhere'].map((variant, n) => [variant, n] as const))('%s', async (_variant, n) => {
    const dir = tempDir();
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger, captureFailures: { dir } });
    const request = withCredentials('signature-elsewhere', n);
    await receiver.handle(request);
    const [text] = await captures(dir, 1);
    expect(leaks(text!)).toEqual([]);
    const record = JSON.parse(text!) as CaptureRecord;
    const diagnosed = diagnoseDelivery(
      { method: record.method, headers: record.headers, body: Buffer.from(record.body_b64, 'base64') },
      { publicKeys: keys.publicKeyPem },
    );
    // What the diagnosis says of the delivery as the service's signature left it, credentials aside.
    const bare = breakDelivery(buildTestEvent(), 'signature-elsewhere', { privateKey: keys.privateKey, variant: n });
    const direct = diagnoseDelivery({ headers: bare.headers, body: bare.body }, { publicKeys: keys.publicKeyPem });
    expect(direct.cause).toBe('signature-elsewhere');
    expect(diagnosed.cause).toBe('signature-elsewhere');
    expect(diagnosed.detail).toEqual(direct.detail);
    expect(diagnosed.message).toBe(direct.message);
  });

  it('a value of a signature’s length that no configured key decodes is dropped', async () => {
    const dir = tempDir();
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger, captureFailures: { dir } });
    // A real signature by another 2048-bit key, under another name: a length test would keep it.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const signed = signTestEvent(buildTestEvent(), { privateKey: other });
    const { 'X-Service-Signature': _dropped, ...rest } = signed.headers;
    await receiver.handle({ method: 'POST', headers: { ...rest, 'x-signature': signed.signature }, rawBody: signed.body });
    const [text] = await captures(dir, 1);
    expect(text).not.toContain(signed.signature.slice(0, 64));
    expect((JSON.parse(text!) as CaptureRecord).headers['x-signature']).toBe('[dropped]');
  });
});
