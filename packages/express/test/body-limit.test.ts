// Bodies over the limit are refused while streaming, without being buffered; broken uploads are answered too.
import http from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { createExpressMiddleware, type ExpressWebhookMiddleware } from '../src/index.js';
import { HEAD_REFUSALS, sendUnfinishedBody } from '../../core/test/helpers/unfinished-body.js';
import { startApp, type RunningApp } from './helpers.js';

const keys = createTestKeyPair();
const FIFTY_MB = 50 * 1024 * 1024;
let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** `onRequest` is told when a request reaches the app (its head parsed), before the middleware reads the body. */
async function start(onRequest: () => void = () => {}): Promise<{ middleware: ExpressWebhookMiddleware; runs: () => number }> {
  let runs = 0;
  const middleware = createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => void runs++ });
  running = await startApp((app) =>
    app.post(
      '/hook',
      (_req, _res, next) => {
        onRequest();
        next();
      },
      middleware,
    ),
  );
  return { middleware, runs: () => runs };
}

interface Upload {
  status: number;
  body: string;
  connection: string | undefined;
  /** Bytes the client had written when the answer arrived. */
  sentWhenAnswered: number;
}

/** Streams `total` bytes of JSON-ish filler in 64 KiB chunks (with or without Content-Length) and stops at the answer. */
function upload(port: number, total: number, declareLength: boolean): Promise<Upload> {
  // A real signature over another body (replayed): it decodes under the key, so the body is read.
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-service-signature': buildSignedRequest().signature };
  if (declareLength) headers['content-length'] = String(total);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/hook', headers });
    req.on('response', (res) => {
      answered = true;
      const sentWhenAnswered = sent;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection, sentWhenAnswered });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const write = (): void => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', write);
          return;
        }
      }
      if (!answered) req.end();
    };
    write();
  });
}

describe('a 50 MB body', () => {
  it.each([
    ['with Content-Length', true],
    ['chunked', false],
  ])('is refused with 413 before the upload completes (%s), handler never run', async (_how, declareLength) => {
    const { middleware, runs } = await start();
    const rssBefore = process.memoryUsage().rss;
    const res = await upload(running!.port, FIFTY_MB, declareLength);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'ERR_BODY_TOO_LARGE' } });
    expect(res.connection).toBe('close');
    expect(res.sentWhenAnswered).toBeLessThan(FIFTY_MB / 4);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(40 * 1024 * 1024);
    expect(runs()).toBe(0);
    expect(middleware.receiver.stats().rejected['ERR_BODY_TOO_LARGE']).toBe(1);
  });

  it('is refused from its Content-Length alone, before a byte of it is sent', async () => {
    await start();
    const answer = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1',
        port: running!.port,
        method: 'POST',
        path: '/hook',
        headers: { 'content-type': 'application/json', 'content-length': String(FIFTY_MB) },
      });
      req.on('response', (res) => {
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer).toBe(413);
  });
});

describe('a broken upload', () => {
  it('counts a client that hangs up mid-body as ERR_BODY_INCOMPLETE, handler never run', async () => {
    let arrived!: () => void;
    const inApp = new Promise<void>((resolve) => (arrived = resolve));
    const { middleware, runs } = await start(arrived);
    const request = buildSignedRequest();
    const head = [
      'POST /hook HTTP/1.1',
      'Host: 127.0.0.1',
      ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`),
      `content-length: ${request.body.length}`,
      '',
      '',
    ].join('\r\n');
    const socket = connect(running!.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(head);
    socket.write(request.body.subarray(0, 100));
    await inApp; // the server is on the request: hanging up now is mid-body
    socket.destroy();
    await expect.poll(() => middleware.receiver.stats().rejected['ERR_BODY_INCOMPLETE']).toBe(1);
    expect(runs()).toBe(0);
  });
});

describe('a request refused by the checks that need no body', () => {
  it.each(HEAD_REFUSALS)(
    '%s: answered while the body has not arrived, connection closed, handler never run',
    async (_what, headers, status, code) => {
      const { middleware, runs } = await start();
      // The client sends the head and a first chunk, then waits for the answer: the body never ends.
      const res = await sendUnfinishedBody(`${running!.url}/hook`, headers);
      expect([res.status, res.body.error?.code]).toEqual([status, code]);
      expect(res.sentWhenAnswered).toBe(1024);
      expect(res.connection).toBe('close');
      await res.closedByServer;
      expect(runs()).toBe(0);
      expect(middleware.receiver.stats()).toMatchObject({ received: 1, verified: 0, rejected: { [code]: 1 } });
    },
  );
});
