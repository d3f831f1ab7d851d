// A 50 MB body is refused with 413 while it is still being sent, not after buffering it.
import type { FastifyInstance } from 'fastify';
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from '@jobhook/core';
import { HEAD_REFUSALS, sendUnfinishedBody } from '../../core/test/helpers/unfinished-body.js';
import { buildApp, listen, receiverOptions, signed } from './helpers.js';

const FIFTY_MB = 50 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/**
 * Sends `total` bytes in 64 KiB chunks (respecting backpressure) until the answer arrives.
 * `chunked`: no Content-Length, so the limit is enforced while streaming.
 */
function upload(url: string, headers: Record<string, string>, total: number, chunked: boolean) {
  return new Promise<{ status: number; body: string; sentBytes: number }>((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const req = httpRequest(url, {
      method: 'POST',
      headers: chunked ? headers : { ...headers, 'content-length': String(total) },
    });
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sentBytes }));
      res.on('error', reject);
    });
    // The server closes the connection after answering: writes after that fail, which is the point.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const pump = (): void => {
      while (!answered && sentBytes < total) {
        sentBytes += CHUNK.length;
        if (!req.write(CHUNK)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe('@jobhook/fastify: body limit', () => {
  it.each([
    ['with Content-Length: refused before reading', false],
    ['chunked: refused while streaming', true],
  ])('answers 413 to a 50 MB body %s, handler never run', async (_name, chunked) => {
    const options = receiverOptions();
    app = await buildApp(options);
    const url = await listen(app);
    const { status, body, sentBytes } = await upload(url, signed().headers, FIFTY_MB, chunked);
    expect(status).toBe(413);
    expect(JSON.parse(body).error.code).toBe('ERR_BODY_TOO_LARGE');
    // Answered long before the upload could have finished (socket buffers hold a few MB at most).
    expect(sentBytes).toBeLessThan(FIFTY_MB / 4);
    expect(options.calls).toEqual([]);
  });

  it('uses maxBodyBytes as the route bodyLimit, not the app’s', async () => {
    const options = receiverOptions({ maxBodyBytes: 4 * 1024 * 1024 });
    app = await buildApp(options);
    const request = signed({ output: { raw_text: 'x'.repeat(2 * 1024 * 1024) } }); // over Fastify's default 1 MiB
    const res = await app.inject({ method: 'POST', url: '/webhooks/jobs', headers: request.headers, payload: request.body });
    expect(res.statusCode).toBe(200);
    expect(options.calls).toEqual([request.event.job_id]);
  });

  it('answers 413 through inject too (Content-Length over the limit)', async () => {
    app = await buildApp(receiverOptions({ maxBodyBytes: 1024 }));
    const res = await app.inject({
      method: 'POST',
      url: '/webhooks/jobs',
      headers: { 'content-type': 'application/json' },
      payload: Buffer.alloc(2048, 0x20),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('ERR_BODY_TOO_LARGE');
  });

  it('answers 400 ERR_BODY_INCOMPLETE when Content-Length does not match the body', async () => {
    app = await buildApp(receiverOptions());
    const request = signed();
    // inject sends the payload as is with the header we give: more bytes than announced.
    const res = await app.inject({
      method: 'POST',
      url: '/webhooks/jobs',
      headers: { ...request.headers, 'content-length': String(request.body.length - 10) },
      payload: request.body,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('ERR_BODY_INCOMPLETE');
  });
});

describe('@jobhook/fastify: a request refused by the checks that need no body', () => {
  it.each(HEAD_REFUSALS)(
    '%s: answered while the body has not arrived, connection closed, handler never run',
    async (_what, headers, status, code) => {
      const options = receiverOptions();
      const receiver = createReceiver(options);
      app = await buildApp({ receiver });
      // The client sends the head and a first chunk, then waits for the answer: the body never ends.
      const res = await sendUnfinishedBody(await listen(app), headers);
      expect([res.status, res.body.error?.code]).toEqual([status, code]);
      expect(res.sentWhenAnswered).toBe(1024);
      expect(res.connection).toBe('close');
      await res.closedByServer;
      expect(options.calls).toEqual([]);
      expect(receiver.stats()).toMatchObject({ received: 1, verified: 0, rejected: { [code]: 1 } });
    },
  );
});
