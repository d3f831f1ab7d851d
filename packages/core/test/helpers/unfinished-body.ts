/**
 * A client for the adapters' tests: a request whose body never finishes, to show a server answered
 * without reading it; and the body-boundary tests every adapter runs with it.
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ReceiverOptions, ReceiverStats } from '@jobhook/core';
// The package path, not ../../src: the adapters' tests sign with the same module's per-process key.
import { buildSignedRequest } from '@jobhook/core/testing';

/** What the client saw when it sent a request head and the first chunk of a body it never finished. */
export interface UnfinishedUpload {
  status: number;
  /** The answer's `Connection` header. */
  connection: string | undefined;
  /** The answer's `Retry-After` header. */
  retryAfter: string | undefined;
  /** Milliseconds from sending the head to the answer's head. */
  answeredAfterMs: number;
  body: { error?: { code: string; message: string } };
  /** Body bytes the client had written when the answer arrived: the first chunk, nothing more. */
  sentWhenAnswered: number;
  /** Resolves when the server has closed the connection (the client never does). */
  closedByServer: Promise<void>;
}

/**
 * POSTs `headers` and a first 1 KiB chunk of a body that never ends (the rest of a declared
 * `Content-Length` never comes; without one, the chunked body is never terminated), then waits for
 * the answer: a server that waited for the body would never give one.
 */
export function sendUnfinishedBody(
  url: string,
  headers: Record<string, string>,
  { firstChunkBytes = 1024, localAddress }: { firstChunkBytes?: number; localAddress?: string } = {},
): Promise<UnfinishedUpload> {
  const first = Buffer.alloc(firstChunkBytes, 0x20);
  const start = performance.now();
  return new Promise((resolve, reject) => {
    let sent = 0;
    const req = httpRequest(url, { method: 'POST', headers, ...(localAddress === undefined ? {} : { localAddress }), agent: false });
    req.on('error', () => {}); // a write racing the server's close: the answer below is what counts
    req.on('socket', (socket) => socket.on('error', () => {}));
    req.on('response', (res) => {
      const sentWhenAnswered = sent;
      const answeredAfterMs = performance.now() - start;
      const closedByServer = new Promise<void>((done) => res.socket.once('close', () => done()));
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          retryAfter: res.headers['retry-after'],
          answeredAfterMs,
          body: JSON.parse(text),
          sentWhenAnswered,
          closedByServer,
        }),
      );
      res.on('error', reject);
    });
    if (first.length > 0) req.write(first);
    else req.flushHeaders();
    sent += first.length;
  });
}

/**
 * Requests every adapter must refuse from the head alone, before the body arrives: [what, headers,
 * status, code]. The adapters' tests send each with a body that never ends.
 */
export const HEAD_REFUSALS: Array<[string, Record<string, string>, number, string]> = [
  [
    '401, signature missing (Content-Length declared)',
    { 'content-type': 'application/json', 'content-length': '65536' },
    401,
    'ERR_SIGNATURE_MISSING',
  ],
  [
    '401, signature not hex (chunked)',
    { 'content-type': 'application/json', 'x-service-signature': 'not-hex!' },
    401,
    'ERR_SIGNATURE_MALFORMED',
  ],
  [
    '401, signature of no configured key’s length',
    { 'content-type': 'application/json', 'content-length': '65536', 'x-service-signature': 'ab'.repeat(384) },
    401,
    'ERR_SIGNATURE_MALFORMED',
  ],
  [
    '401, a made-up signature of the right length (no configured key decodes it)',
    { 'content-type': 'application/json', 'content-length': '65536', 'x-service-signature': 'ab'.repeat(256) },
    401,
    'ERR_SIGNATURE_INVALID',
  ],
  [
    '415, content type not JSON',
    { 'content-type': 'text/plain', 'content-length': '65536', 'x-service-signature': 'ab'.repeat(256) },
    415,
    'ERR_UNSUPPORTED_MEDIA_TYPE',
  ],
];

/**
 * Headers of a body the precheck admits: a real signature of the test key over another body
 * (replayed), JSON, 64 KiB announced. `sendUnfinishedBody` with them holds the body open.
 */
export function admittedHead(signature: string): Record<string, string> {
  return { 'content-type': 'application/json', 'content-length': '65536', 'x-service-signature': signature };
}

/** A made-up signature of a 2048-bit key's length: hex, but no key decodes it. */
export const MADE_UP_SIGNATURE = 'ab'.repeat(256);

/** One adapter's app for {@link describeBodyBoundary}, started with the test key's public half. */
export interface BodyBoundaryApp {
  url: string;
  /** The receiver's counters. */
  stats(): ReceiverStats;
  /** Per answer, whether the request's body stream had been read when the answer was written. */
  readWhenAnswered: boolean[];
  /** How many times the application's handler ran. */
  handled(): number;
}

/**
 * The body-boundary tests every adapter passes: no body is read unless a configured key decodes its
 * signature, and an admitted body must arrive within `bodyTimeoutMs`. `start` is the adapter's own
 * setup (its server, its probe of `readableDidRead`); the tests are the same for all.
 */
export function describeBodyBoundary(adapter: string, start: (options?: Partial<ReceiverOptions>) => Promise<BodyBoundaryApp>): void {
  describe(`${adapter}: the body boundary`, () => {
    it('a made-up signature of the right length: 401 with zero body bytes read, connection closed', async () => {
      const app = await start();
      const res = await sendUnfinishedBody(app.url, admittedHead(MADE_UP_SIGNATURE));
      expect([res.status, res.body.error?.code]).toEqual([401, 'ERR_SIGNATURE_INVALID']);
      expect(app.readWhenAnswered).toEqual([false]);
      expect(res.connection).toBe('close');
      await res.closedByServer;
      expect(app.handled()).toBe(0);
      expect(app.stats()).toMatchObject({ verified: 0, bodyBytesInFlight: 0 });
    });

    it('a replayed real signature: the body is read (the same probe says so)', async () => {
      const app = await start();
      // One delivery's signature over another delivery's body.
      const [first, other] = [buildSignedRequest(), buildSignedRequest()];
      const res = await fetch(app.url, {
        method: 'POST',
        headers: { ...other.headers, 'x-service-signature': first.signature },
        body: other.body,
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_SIGNATURE_INVALID');
      expect(app.readWhenAnswered).toEqual([true]);
    });

    it('bodyTimeoutMs 1000: a body that stops coming is answered 503 ERR_BODY_TIMEOUT with Retry-After after about 1 s', async () => {
      const app = await start({ bodyTimeoutMs: 1000, retryAfterSeconds: 7 });
      const res = await sendUnfinishedBody(app.url, admittedHead(buildSignedRequest().signature));
      expect([res.status, res.body.error?.code]).toEqual([503, 'ERR_BODY_TIMEOUT']);
      expect(res.retryAfter).toBe('7');
      expect(res.answeredAfterMs).toBeGreaterThanOrEqual(950);
      expect(res.connection).toBe('close');
      await res.closedByServer;
      expect(app.handled()).toBe(0);
      expect(app.stats()).toMatchObject({ rejected: { ERR_BODY_TIMEOUT: 1 }, bodyBytesInFlight: 0 });
    });

    it('a replayed signature announcing 64 KiB holds only the bytes it sent (1 KiB), not its Content-Length', async () => {
      const app = await start();
      const pending = sendUnfinishedBody(app.url, admittedHead(buildSignedRequest().signature));
      await expect.poll(() => app.stats().bodyBytesInFlight).toBe(1024);
      expect(app.stats().bodyBytesInFlight).toBe(1024);
      const res = await pending; // cut at the body's deadline, and the charge given back
      expect(res.status).toBe(503);
      expect(app.stats().bodyBytesInFlight).toBe(0);
    });

    it('bodyStartTimeoutMs 300: a head whose body never starts is answered 503 ERR_BODY_TIMEOUT with Retry-After, connection closed', async () => {
      const app = await start({ bodyStartTimeoutMs: 300, retryAfterSeconds: 7 });
      const res = await sendUnfinishedBody(app.url, admittedHead(buildSignedRequest().signature), { firstChunkBytes: 0 });
      expect([res.status, res.body.error?.code, res.retryAfter, res.connection]).toEqual([503, 'ERR_BODY_TIMEOUT', '7', 'close']);
      expect(res.body.error?.message).toMatch(/did not start within 300 ms/);
      await res.closedByServer;
      expect(app.stats()).toMatchObject({ bodyBytesInFlight: 0 });
    });

    it('one body per signature and client address: the same signature from 127.0.0.2 again is 503 at once, from 127.0.0.3 it is read', async () => {
      const app = await start({ bodyStartTimeoutMs: 5000, bodyTimeoutMs: 5000 });
      const signature = buildSignedRequest().signature;
      const held = sendUnfinishedBody(app.url, admittedHead(signature), { localAddress: '127.0.0.2' });
      await expect.poll(() => app.stats().bodyBytesInFlight).toBe(1024);
      const again = await sendUnfinishedBody(app.url, admittedHead(signature), { localAddress: '127.0.0.2' });
      expect([again.status, again.body.error?.code]).toEqual([503, 'ERR_RECEIVER_BUSY']);
      // Another address (the service's, say) with the same signature is admitted: its bytes are charged too.
      const other = sendUnfinishedBody(app.url, admittedHead(signature), { localAddress: '127.0.0.3' });
      await expect.poll(() => app.stats().bodyBytesInFlight).toBe(2048);
      // Both are cut at their deadline and give their bytes back.
      expect([(await held).status, (await other).status]).toEqual([503, 503]);
      expect(app.stats().bodyBytesInFlight).toBe(0);
    });
  });
}
