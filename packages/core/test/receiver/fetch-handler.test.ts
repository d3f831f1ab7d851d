// createFetchHandler: the pipeline behind a web-standard (Request) => Response handler, with
// Request objects as Next.js, Hono, Bun or Deno hand them over, and once over a real socket through
// a small node:http bridge (what @hono/node-server does).
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createFetchHandler, createReceiver } from '../../src/index.js';
import { buildSignedRequest, createTestKeyPair, signTestEvent } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const URL_ = 'https://receiver.example/webhooks/jobs';
/** Headers that pass the checks made before the body is read (JSON, a real signature over another body, which the test key decodes), so the body is read. */
const READ_THE_BODY = { 'content-type': 'application/json', 'x-service-signature': buildSignedRequest().signature };

function handlerWithLog(options: { maxBodyBytes?: number } = {}) {
  const handled: string[] = [];
  const handler = createFetchHandler({ publicKeys: keys.publicKeyPem, onEvent: (event) => void handled.push(event.job_id), ...options });
  return { handler, handled };
}

const toRequest = (q: ReturnType<typeof buildSignedRequest>, init: RequestInit = {}): Request =>
  new Request(URL_, { method: q.method, headers: q.headers, body: q.rawBody, ...init });

/** A node:http server handing each request to `handler` as a `Request` (what @hono/node-server does). */
async function serveThroughBridge(handler: (request: Request) => Promise<Response>): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers as IncomingHttpHeaders)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
    } as RequestInit);
    void handler(request).then(async (answer) => {
      res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/jobs`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('createFetchHandler', () => {
  it('200 for a verified event, handled once; the same delivery again is a 200 duplicate', async () => {
    const { handler, handled } = handlerWithLog();
    const q = buildSignedRequest({ status: 'success', output: { text: 'Zoë 東京', ratio: 1.0 } });
    const first = await handler(toRequest(q));
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await first.json()).toMatchObject({ ok: true });
    const again = await handler(toRequest(q));
    expect(await again.json()).toMatchObject({ ok: true, duplicate: true });
    expect(handled).toEqual([q.event.job_id]);
  });

  it('401 for a tampered body, 405 for GET (with Allow), 415 for text/plain: the handler never runs', async () => {
    const { handler, handled } = handlerWithLog();
    const q = buildSignedRequest();
    const tampered = await handler(toRequest(q, { body: Buffer.from(q.rawBody.toString('utf8').replace('success', 'fail')) }));
    expect(tampered.status).toBe(401);
    expect(await tampered.json()).toMatchObject({ error: { code: 'ERR_SIGNATURE_INVALID' } });
    const get = await handler(new Request(URL_, { method: 'GET', headers: q.headers }));
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    const text = await handler(toRequest(q, { headers: { ...q.headers, 'content-type': 'text/plain' } }));
    expect(text.status).toBe(415);
    expect(handled).toEqual([]);
  });

  it('a GET declaring a huge body is 405, not 413: only a POST body is read', async () => {
    const { handler } = handlerWithLog({ maxBodyBytes: 1024 });
    const res = await handler(new Request(URL_, { method: 'GET', headers: { 'content-length': '5000000' } }));
    expect(res.status).toBe(405);
  });

  it('413 from Content-Length alone, before any byte is read', async () => {
    const { handler } = handlerWithLog({ maxBodyBytes: 1024 });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(512));
      },
    });
    const res = await handler(
      new Request(URL_, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '5000000' },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: 'ERR_BODY_TOO_LARGE' } });
    expect(pulled).toBeLessThanOrEqual(1); // a stream may pre-pull one chunk; nothing was read on purpose
  });

  it('413 for an endless streamed body without Content-Length: reading stops just past the limit', async () => {
    const { handler } = handlerWithLog({ maxBodyBytes: 64 * 1024 });
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(16 * 1024));
      },
      cancel() {
        cancelled = true;
      },
    });
    const res = await handler(new Request(URL_, { method: 'POST', headers: READ_THE_BODY, body, duplex: 'half' } as RequestInit));
    expect(res.status).toBe(413);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThanOrEqual(6); // 64 KiB / 16 KiB + 1, plus at most one pre-pull
  });

  it('a body that errors while streaming: 400 ERR_BODY_INCOMPLETE, never a throw', async () => {
    const { handler } = handlerWithLog();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"event":'));
        controller.error(new Error('client went away'));
      },
    });
    const res = await handler(new Request(URL_, { method: 'POST', headers: READ_THE_BODY, body, duplex: 'half' } as RequestInit));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'ERR_BODY_INCOMPLETE' } });
  });

  it('{ path }: answers only its path; another path gets an empty 404 the receiver never sees', async () => {
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    const handler = createFetchHandler(receiver, { path: '/webhooks/jobs' });
    const q = buildSignedRequest();
    expect((await handler(toRequest(q))).status).toBe(200);
    const other = await handler(new Request('https://receiver.example/elsewhere', { method: 'POST', headers: q.headers, body: q.rawBody }));
    expect(other.status).toBe(404);
    expect(await other.text()).toBe('');
    expect(receiver.stats().received).toBe(1);
    expect(() => createFetchHandler(receiver, { path: 'webhooks' })).toThrow(
      /^createFetchHandler: path must be a string starting with "\/", got "webhooks"/,
    );
  });

  it('takes a receiver made elsewhere (handler.receiver is it) and names itself in option errors', () => {
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    expect(createFetchHandler(receiver).receiver).toBe(receiver);
    expect(() => createFetchHandler({ publicKeys: keys.publicKeyPem } as never)).toThrow(/^createFetchHandler: .*handler/);
  });

  it('over a real socket through a node:http → Request bridge: handled, then 413 for 2 MB', async () => {
    const { handler, handled } = handlerWithLog();
    const bridge = await serveThroughBridge(handler);
    try {
      const signed = signTestEvent();
      const ok = await fetch(bridge.url, { method: 'POST', headers: signed.headers, body: signed.body });
      expect(ok.status).toBe(200);
      expect(handled).toEqual([signed.event.job_id]);
      const big = await fetch(bridge.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.alloc(2 * 1024 * 1024, 0x20),
      }).catch((err: unknown) => err);
      // The answer is 413; a client still sending may instead see the connection end first.
      if (big instanceof Response) expect(big.status).toBe(413);
      else expect(String(big)).toMatch(/fetch failed|other side closed|ECONNRESET/);
    } finally {
      await bridge.close();
    }
  });

  describe('a request refused by the checks that need no body', () => {
    it.each([
      ['401, signature missing', { 'content-type': 'application/json' }, 401, 'ERR_SIGNATURE_MISSING'],
      ['401, signature not hex', { 'content-type': 'application/json', 'x-service-signature': 'not-hex!' }, 401, 'ERR_SIGNATURE_MALFORMED'],
      [
        '401, signature of no configured key’s length',
        { 'content-type': 'application/json', 'x-service-signature': 'ab'.repeat(384) },
        401,
        'ERR_SIGNATURE_MALFORMED',
      ],
      [
        '415, content type not JSON',
        { 'content-type': 'text/plain', 'x-service-signature': 'ab'.repeat(256) },
        415,
        'ERR_UNSUPPORTED_MEDIA_TYPE',
      ],
    ])('%s: answered over a body that never ends, left unread, handler never run', async (_what, headers, status, code) => {
      const { handler, handled } = handlerWithLog();
      // A first chunk, and never the rest: the stream is never closed.
      const body = new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new Uint8Array(1024).fill(0x20)) });
      const request = new Request(URL_, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
      const res = await handler(request);
      expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([status, code]);
      expect(request.bodyUsed).toBe(false);
      expect(handled).toEqual([]);
      expect(handler.receiver.stats()).toMatchObject({ received: 1, verified: 0, rejected: { [code]: 1 } });
    });

    it('over a real socket: 401 while the client has sent only the first chunk of a body it never finishes', async () => {
      const { handler, handled } = handlerWithLog();
      const bridge = await serveThroughBridge(handler);
      try {
        const answer = await new Promise<{ status: number; code: string }>((resolve, reject) => {
          const req = httpRequest(bridge.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': '65536' },
          });
          req.on('error', () => {}); // the bridge may drop the unread upload after answering
          req.on('response', (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as { error: { code: string } }).error.code }),
            );
            res.on('error', reject);
          });
          req.write(Buffer.alloc(1024, 0x20)); // the first chunk; the other 63 KiB never come
        });
        expect(answer).toEqual({ status: 401, code: 'ERR_SIGNATURE_MISSING' });
        expect(handled).toEqual([]);
      } finally {
        await bridge.close();
      }
    });
  });
});

describe('createFetchHandler: clientAddress and the per-chunk charge', () => {
  /** A body that sends `first` bytes, then nothing (never ends), and says when it was cancelled. */
  function heldBody(first: number): { body: ReadableStream<Uint8Array>; cancelled: Promise<void> } {
    let cancel!: () => void;
    const cancelled = new Promise<void>((resolve) => (cancel = resolve));
    let sent = false;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (!sent) controller.enqueue(new Uint8Array(first));
          sent = true;
          return new Promise(() => {}); // the rest never comes
        },
        cancel: () => cancel(),
      },
      { highWaterMark: 0 },
    );
    return { body, cancelled };
  }
  const held = (signature: string, first: number) => {
    const { body, cancelled } = heldBody(first);
    const headers = { 'content-type': 'application/json', 'content-length': '65536', 'x-service-signature': signature };
    return { request: new Request(URL_, { method: 'POST', headers, body, duplex: 'half' } as RequestInit), cancelled };
  };

  it('hands the runtime arguments to clientAddress; one body per signature and address; bytes charged as they arrive', async () => {
    const seen: unknown[] = [];
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, bodyStartTimeoutMs: 200, bodyTimeoutMs: 200 });
    const handler = createFetchHandler(receiver, {
      clientAddress: (_request, info) => {
        seen.push(info);
        return (info as { remoteAddr: { hostname: string } }).remoteAddr.hostname;
      },
    });
    const signature = buildSignedRequest().signature;
    const first = held(signature, 300);
    const answered = handler(first.request, { remoteAddr: { hostname: '192.0.2.66' } });
    await expect.poll(() => receiver.stats().bodyBytesInFlight).toBe(300);
    const again = await handler(held(signature, 10).request, { remoteAddr: { hostname: '192.0.2.66' } });
    expect(again.status).toBe(503);
    expect(await again.json()).toMatchObject({ error: { code: 'ERR_RECEIVER_BUSY' } });
    const service = held(signature, 20);
    const serviceAnswer = handler(service.request, { remoteAddr: { hostname: '203.0.113.9' } });
    await expect.poll(() => receiver.stats().bodyBytesInFlight).toBe(320);
    // Both stall: cut at their deadline (503 + Retry-After), their bodies cancelled, their bytes given back.
    const [a, b] = await Promise.all([answered, serviceAnswer]);
    expect([a.status, b.status, a.headers.get('retry-after')]).toEqual([503, 503, '30']);
    await Promise.all([first.cancelled, service.cancelled]);
    expect(receiver.stats().bodyBytesInFlight).toBe(0);
    expect(seen).toEqual([
      { remoteAddr: { hostname: '192.0.2.66' } },
      { remoteAddr: { hostname: '192.0.2.66' } },
      { remoteAddr: { hostname: '203.0.113.9' } },
    ]);
  });

  it('refuses a clientAddress that is not a function', () => {
    expect(() =>
      createFetchHandler({ publicKeys: keys.publicKeyPem, onEvent: () => {} }, { clientAddress: 'x-forwarded-for' as never }),
    ).toThrow(/createFetchHandler: clientAddress must be a function \(request, \.\.\.platform\) => string, got "x-forwarded-for"/);
  });
});
