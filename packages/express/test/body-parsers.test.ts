// A JSON body parser mounted before the middleware: with captureRawBody the exact bytes are verified;
// without it, a clear 500 that says how to fix the setup; a re-serialized object is never verified.
import { afterEach, describe, expect, it } from 'vitest';
import express from 'express';
import { rawJson } from '@jobhook/core/json';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { captureRawBody, createExpressMiddleware } from '../src/index.js';
import { send, startApp, type RunningApp } from './helpers.js';

const keys = createTestKeyPair();
let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(parser: express.RequestHandler) {
  const handled: string[] = [];
  const middleware = createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: (e) => void handled.push(e.job_id) });
  running = await startApp((app) => {
    app.use(parser);
    app.post('/hook', middleware);
  });
  return { url: `${running.url}/hook`, handled };
}

// 1.0 and a 30-digit integer: JSON.parse + JSON.stringify would not give back the signed form.
const exact = () => buildSignedRequest({ output: { score: rawJson('1.0'), big: 123456789012345678901234567890n } });

describe('after express.json()', () => {
  it('verifies the bytes kept by express.json({ verify: captureRawBody })', async () => {
    const { url, handled } = await start(express.json({ verify: captureRawBody }));
    const request = exact();
    const res = await send(url, request);
    expect(res.status).toBe(200);
    expect(handled).toEqual([request.event.job_id]);
  });

  it('answers 500 ERR_BODY_ALREADY_PARSED, saying how to fix it, without the capture hook', async () => {
    const { url, handled } = await start(express.json());
    const res = await send(url, exact());
    expect(res.status).toBe(500);
    expect(res.body.error?.code).toBe('ERR_BODY_ALREADY_PARSED');
    expect(res.body.error?.message).toContain('@jobhook/express');
    expect(res.body.error?.message).toContain('before express.json()');
    expect(res.body.error?.message).toContain('captureRawBody');
    expect(handled).toEqual([]);
  });

  it('never verifies a re-serialized object, even one whose JSON.stringify would match', async () => {
    // A body whose sorted JSON.stringify equals the signed canonical form: still refused, not verified.
    const { url, handled } = await start(express.json());
    const res = await send(url, buildSignedRequest({}, { profile: 'javascript' }));
    expect(res.body.error?.code).toBe('ERR_BODY_ALREADY_PARSED');
    expect(handled).toEqual([]);
  });

  it('reads the stream itself when the parser skipped the request (not JSON): 415', async () => {
    const { url } = await start(express.json());
    const request = exact();
    const res = await send(url, { headers: { ...request.headers, 'content-type': 'text/plain' }, body: request.body });
    expect(res.status).toBe(415);
  });
});

describe('after other parsers', () => {
  it('verifies the Buffer of express.raw({ type: "application/json" })', async () => {
    const { url, handled } = await start(express.raw({ type: 'application/json' }));
    const request = exact();
    expect((await send(url, request)).status).toBe(200);
    expect(handled).toEqual([request.event.job_id]);
  });

  it('refuses the decoded string of express.text({ type: "application/json" })', async () => {
    const { url } = await start(express.text({ type: 'application/json' }));
    const res = await send(url, exact());
    expect(res.body.error?.code).toBe('ERR_BODY_ALREADY_PARSED');
  });

  it('refuses a stream consumed by hand-written code that left no body', async () => {
    const { url } = await start((req, _res, next) => {
      req.resume();
      req.on('end', () => next());
    });
    const res = await send(url, exact());
    expect(res.status).toBe(500);
    expect(res.body.error?.code).toBe('ERR_BODY_ALREADY_PARSED');
  });

  it('refuses a request flagged by body-parser 1.x (Express 4: req._body)', async () => {
    const { url } = await start((req, _res, next) => {
      (req as { _body?: boolean })._body = true;
      req.body = { job_id: 'x' };
      next();
    });
    const res = await send(url, exact());
    expect(res.body.error?.code).toBe('ERR_BODY_ALREADY_PARSED');
  });
});
