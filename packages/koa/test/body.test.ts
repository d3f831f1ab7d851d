import { request as httpRequest, type IncomingMessage } from 'node:http';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import type { ReceiverOutcome } from '@jobhook/core';
import { signPayload } from '@jobhook/core/sign';
import { buildSignedRequest } from '@jobhook/core/testing';
import { createKoaMiddleware } from '../src/index.js';
import { HEAD_REFUSALS, sendUnfinishedBody } from '../../core/test/helpers/unfinished-body.js';
import { keys, listen, post, signed } from './helpers.js';

const FIFTY_MB = 50 * 1024 * 1024;
/** A real signature over another body (replayed): the test key decodes it, so the body is read. */
const WELL_FORMED_SIGNATURE = { 'x-service-signature': buildSignedRequest().signature };

/** Uploads `total` bytes in 64 KiB chunks; resolves at the answer with how much had been written. */
function upload(url: string, total: number, chunked: boolean): Promise<{ res: IncomingMessage; body: string; written: number }> {
  const headers: Record<string, string | number> = { 'content-type': 'application/json', ...WELL_FORMED_SIGNATURE };
  if (!chunked) headers['content-length'] = total;
  const req = httpRequest(url, { method: 'POST', headers });
  let written = 0;
  req.on('error', () => {}); // EPIPE / ECONNRESET once the server closed the connection: expected
  return new Promise((resolve, reject) => {
    req.on('response', (res) => {
      const seen = written;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ res, body, written: seen }));
      res.on('error', reject);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = (): void => {
      while (written < total && !req.destroyed) {
        written += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/** A JSON body parser as koa-bodyparser does it: reads the stream, sets body (and rawBody if `keepRaw`). */
function inlineBodyParser(keepRaw: boolean): Koa.Middleware {
  return async function inlineJsonParser(ctx, next) {
    if (ctx.is('application/json')) {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const request = ctx.request as typeof ctx.request & { body?: unknown; rawBody?: string };
      request.body = JSON.parse(text);
      if (keepRaw) request.rawBody = text;
    }
    await next();
  };
}

async function start(setup: (app: Koa) => void = () => {}) {
  const ran: string[] = [];
  const outcomes: ReceiverOutcome[] = [];
  const app = new Koa();
  setup(app);
  app.use(
    createKoaMiddleware({
      publicKeys: keys.publicKeyPem,
      onEvent: (event) => {
        ran.push(event.job_id);
      },
      onOutcome: (outcome) => outcomes.push(outcome),
    }),
  );
  return { url: await listen(app), ran, outcomes };
}

describe('reading the body', () => {
  it.each([
    ['with Content-Length', false],
    ['chunked', true],
  ])('refuses a 50 MB body %s with 413 before the upload completes, and closes the connection', async (_name, chunked) => {
    const { url, ran } = await start();
    const { res, body, written } = await upload(url, FIFTY_MB, chunked);
    expect(res.statusCode).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(body).error.code).toBe('ERR_BODY_TOO_LARGE');
    expect(written).toBeLessThan(FIFTY_MB / 4);
    expect(ran).toHaveLength(0);
  });

  it('answers ERR_BODY_INCOMPLETE (logged as an outcome) when the client aborts mid-body', async () => {
    let arrived!: () => void;
    const inApp = new Promise<void>((resolve) => (arrived = resolve));
    const { url, outcomes } = await start((app) =>
      app.use(async (_ctx, next) => {
        arrived();
        await next();
      }),
    );
    const req = httpRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': 1000, ...WELL_FORMED_SIGNATURE },
    });
    req.on('error', () => {});
    req.write('{"event": "async_job_completed", ');
    await inApp; // the server is on the request: aborting now is mid-body
    req.destroy();
    await expect.poll(() => outcomes.map((o) => o.code)).toEqual(['ERR_BODY_INCOMPLETE']);
  });

  it('verifies the exact bytes: non-ASCII, 1.0 and key order as sent', async () => {
    const { url, ran } = await start();
    // As the service writes them (isoformat, +00:00), a second apart, just now: the receiver refuses old events.
    const finished = new Date().toISOString().replace('Z', '+00:00');
    const created = new Date(Date.now() - 1000).toISOString().replace('Z', '+00:00');
    const raw = `{"job_id": "6f1c2b1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d", "event": "async_job_completed", "status": "success", "feature": "ocr", "subfeature": "ocr_async", "provider": "amazon", "model": null, "created_at": "${created}", "finished_at": "${finished}", "output": {"text": "caf\u00e9 \u2615", "score": 1.0, "big": 123456789012345678901234567890}}`;
    const { body, headers } = signPayload(Buffer.from(raw, 'utf8'), keys.privateKey);
    const res = await post(url, { headers, body });
    expect(res.body).toEqual({ ok: true, job_id: '6f1c2b1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d', duplicate: false });
    expect(ran).toEqual(['6f1c2b1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d']);
  });
});

describe('a request refused by the checks that need no body', () => {
  it.each(HEAD_REFUSALS)(
    '%s: answered while the body has not arrived, connection closed, handler never run',
    async (_what, headers, status, code) => {
      const { url, ran, outcomes } = await start();
      // The client sends the head and a first chunk, then waits for the answer: the body never ends.
      const res = await sendUnfinishedBody(url, headers);
      expect([res.status, res.body.error?.code]).toEqual([status, code]);
      expect(res.sentWhenAnswered).toBe(1024);
      expect(res.connection).toBe('close');
      await res.closedByServer;
      expect(ran).toHaveLength(0);
      expect(outcomes.map((o) => o.code)).toEqual([code]);
    },
  );
});

describe('a JSON body parser mounted before the middleware', () => {
  it('verifies when the parser keeps ctx.request.rawBody (as koa-bodyparser and @koa/bodyparser do)', async () => {
    const { url, ran } = await start((app) => app.use(inlineBodyParser(true)));
    // Raw UTF-8 (compact body): the parser's string must give back the same bytes.
    const request = buildSignedRequest(
      { output: { text: 'caf\u00e9 \u2615 \u{1F600}' } },
      { privateKey: keys.privateKey, bodyStyle: 'compact' },
    );
    expect(request.body.toString('latin1')).not.toMatch(/^[\x00-\x7f]*$/);
    const res = await post(url, request);
    expect(res.status).toBe(200);
    expect(ran).toEqual([request.event.job_id]);
  });

  it('answers 500 ERR_BODY_ALREADY_PARSED with the fix when the parser kept no raw body, never verifying the re-serialized object', async () => {
    const { url, ran } = await start((app) => app.use(inlineBodyParser(false)));
    const res = await post(url, signed());
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('ERR_BODY_ALREADY_PARSED');
    expect(res.body.error.message).toMatch(/^@jobhook\/koa: a JSON body parser consumed the webhook body/);
    expect(res.body.error.message).toContain('ctx.request.rawBody');
    expect(res.body.error.message).toContain('before the body parser');
    expect(ran).toHaveLength(0);
  });

  it('is not in the way when the parser skipped the request (other content type): the pipeline answers 415', async () => {
    const { url } = await start((app) => app.use(inlineBodyParser(false)));
    const res = await post(url, signed(), { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
  });
});
