// Every row of core's response table, through a real Express server and fetch.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type express from 'express';
import { JobhookError, createMemoryStore, type AsyncJobCompletedEvent, type IdempotencyStore, type ReceiverOptions } from '@jobhook/core';
import { signPayload } from '@jobhook/core/sign';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { createExpressMiddleware } from '../src/index.js';
import { deferred, send, startApp, type RunningApp } from './helpers.js';

const keys = createTestKeyPair();
let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** An app with the middleware on every method of /hook (so GET reaches it), and the events it handled. */
async function start(options: Partial<ReceiverOptions> = {}) {
  const handled: AsyncJobCompletedEvent[] = [];
  const middleware = createExpressMiddleware({
    publicKeys: keys.publicKeyPem,
    onEvent: (event) => {
      handled.push(event);
    },
    ...options,
  });
  running = await startApp((app) => app.all('/hook', middleware));
  return { url: `${running.url}/hook`, handled, middleware };
}

describe('200: verified events', () => {
  it('handles a success event once and answers 200 handled', async () => {
    const { url, handled } = await start();
    const request = buildSignedRequest({ status: 'success', output: { text: 'hi' } });
    const res = await send(url, request);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ ok: true, job_id: request.event.job_id, duplicate: false });
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatchObject({ job_id: request.event.job_id, status: 'success', output: { text: 'hi' } });
  });

  it('routes a fail event to onFail', async () => {
    const fails: string[] = [];
    const successes: string[] = [];
    const { url } = await start({
      onSuccess: (e) => void successes.push(e.job_id),
      onFail: (e) => void fails.push(e.error.message),
    });
    const res = await send(url, buildSignedRequest({ status: 'fail', error: { message: 'provider down', error_code: 'x' } }));
    expect(res.status).toBe(200);
    expect(fails).toEqual(['provider down']);
    expect(successes).toEqual([]);
  });

  it('answers a duplicate 200 duplicate:true without running the handler again', async () => {
    const { url, handled } = await start();
    const request = buildSignedRequest();
    expect((await send(url, request)).body.duplicate).toBe(false);
    const again = await send(url, request);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ok: true, job_id: request.event.job_id, duplicate: true });
    expect(handled).toHaveLength(1);
  });

  it('runs the handler once for 20 concurrent deliveries of one job', async () => {
    const gate = deferred();
    let runs = 0;
    const { url, middleware } = await start({
      onEvent: async () => {
        runs++;
        await gate.promise;
      },
    });
    const request = buildSignedRequest();
    const pending = Array.from({ length: 20 }, () => send(url, request));
    // The first handler holds on until the 19 others have met its claim.
    await expect.poll(() => middleware.receiver.stats().inFlight).toBe(19);
    gate.resolve();
    const answers = await Promise.all(pending);
    expect(runs).toBe(1);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 503)).toHaveLength(19);
    expect((await send(url, request)).body.duplicate).toBe(true);
  });

  it('puts { event, outcome } on res.locals.jobhook once verified, whatever the answer, for code that runs on finish', async () => {
    const seen: Array<{ status: number; jobId: string | undefined; kind?: string }> = [];
    let allSeen!: () => void;
    const fourFinished = new Promise<void>((resolve) => (allSeen = resolve));
    let fail = false;
    const middleware = createExpressMiddleware({
      publicKeys: keys.publicKeyPem,
      onEvent: () => {
        if (fail) throw new Error('handler down');
      },
    });
    running = await startApp((app) => {
      app.use((_req, res, next) => {
        res.on('finish', () => {
          const { jobhook } = res.locals;
          seen.push({
            status: res.statusCode,
            jobId: jobhook?.event.job_id,
            ...(jobhook === undefined ? {} : { kind: jobhook.outcome.kind }),
          });
          if (seen.length === 4) allSeen();
        });
        next();
      });
      app.post('/hook', middleware);
    });
    const request = buildSignedRequest();
    await send(`${running.url}/hook`, request);
    await send(`${running.url}/hook`, request);
    await send(`${running.url}/hook`, { ...request, headers: { ...request.headers, 'x-service-signature': 'ab' } });
    fail = true;
    const failing = buildSignedRequest();
    await send(`${running.url}/hook`, failing);
    await fourFinished; // 'finish' may come after the client has the answer
    expect(seen).toEqual([
      { status: 200, jobId: request.event.job_id, kind: 'handled' },
      { status: 200, jobId: request.event.job_id, kind: 'duplicate' },
      { status: 401, jobId: undefined },
      { status: 500, jobId: failing.event.job_id, kind: 'handler-failed' },
    ]);
  });
});

describe('5xx: the sender retries', () => {
  it('503 + Retry-After while the same job is handled elsewhere', async () => {
    const gate = deferred();
    let started = false;
    const { url } = await start({
      onEvent: () => {
        started = true;
        return gate.promise;
      },
      retryAfterSeconds: 7,
    });
    const request = buildSignedRequest();
    const first = send(url, request);
    await expect.poll(() => started).toBe(true);
    const second = await send(url, request);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('7');
    expect(second.body.error?.code).toBe('ERR_JOB_IN_FLIGHT');
    gate.resolve();
    expect((await first).status).toBe(200);
  });

  it('500 when the handler fails, and the retry runs it again', async () => {
    let calls = 0;
    const { url } = await start({
      onEvent: () => {
        calls++;
        if (calls === 1) throw new Error('database down: secret internals');
      },
    });
    const request = buildSignedRequest();
    const failed = await send(url, request);
    expect(failed.status).toBe(500);
    expect(failed.body.error?.code).toBe('ERR_HANDLER_FAILED');
    expect(failed.body.error?.message).not.toContain('secret');
    const retried = await send(url, request);
    expect(retried.status).toBe(200);
    expect(retried.body.duplicate).toBe(false);
    expect(calls).toBe(2);
  });

  it('503 + Retry-After when the handler outruns handlerTimeoutMs', async () => {
    const gate = deferred();
    const { url } = await start({ onEvent: () => gate.promise, handlerTimeoutMs: 50 });
    const res = await send(url, buildSignedRequest());
    gate.resolve();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.body.error?.code).toBe('ERR_HANDLER_TIMEOUT');
  });

  it('503 + Retry-After when the idempotency store is unreachable, handler not called', async () => {
    const memory = createMemoryStore();
    const store: IdempotencyStore = {
      ...memory,
      claim: () => Promise.reject(new JobhookError('ERR_STORE_UNAVAILABLE', 'redis: connection refused')),
      complete: memory.complete.bind(memory),
      release: memory.release.bind(memory),
      extend: memory.extend.bind(memory),
      close: memory.close.bind(memory),
    };
    const { url, handled } = await start({ store });
    const res = await send(url, buildSignedRequest());
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.body.error?.code).toBe('ERR_STORE_UNAVAILABLE');
    expect(handled).toHaveLength(0);
  });
});

describe('4xx: refused, never retried', () => {
  it.each([
    ['missing', undefined, 'ERR_SIGNATURE_MISSING'],
    ['not hex', 'zz-not-hex', 'ERR_SIGNATURE_MALFORMED'],
    ['not verifying', 'ab'.repeat(256), 'ERR_SIGNATURE_INVALID'],
  ])('401 when the signature is %s', async (_what, signature, code) => {
    const { url, handled } = await start();
    const request = buildSignedRequest();
    const headers: Record<string, string> = { ...request.headers };
    if (signature === undefined) delete headers['x-service-signature'];
    else headers['x-service-signature'] = signature;
    const res = await send(url, { headers, body: request.body });
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe(code);
    expect(handled).toHaveLength(0);
  });

  it('401 for a tampered body', async () => {
    const { url, handled } = await start();
    const request = buildSignedRequest({ output: { amount: 10 } });
    const body = Buffer.from(request.body.toString().replace('10', '99'));
    const res = await send(url, { headers: request.headers, body });
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('ERR_SIGNATURE_INVALID');
    expect(handled).toHaveLength(0);
  });

  it('401 when the hash algorithm is not SHA256', async () => {
    const { url } = await start();
    const request = buildSignedRequest();
    const res = await send(url, { headers: { ...request.headers, 'x-service-hash-algorithm': 'SHA1' }, body: request.body });
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('ERR_HASH_ALGORITHM_UNSUPPORTED');
  });

  it.each([
    ['malformed JSON', '{"job_id": ', 'ERR_BODY_MALFORMED'],
    ['not an object', '[1, 2, 3]', 'ERR_BODY_NOT_OBJECT'],
  ])('400 when the body is %s', async (_what, body, code) => {
    const { url } = await start();
    const { headers } = buildSignedRequest();
    const res = await send(url, { headers, body: Buffer.from(body) });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe(code);
  });

  it('400 when a verified payload is not an event', async () => {
    const { url, handled } = await start();
    const signed = signPayload({ event: 'async_job_completed', job_id: 42 }, keys.privateKey);
    const res = await send(url, { headers: signed.headers, body: signed.body });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('ERR_PAYLOAD_INVALID');
    expect(handled).toHaveLength(0);
  });

  it('413 when the body is over maxBodyBytes (declared length and chunked)', async () => {
    const { url, handled, middleware } = await start({ maxBodyBytes: 2048 });
    const request = buildSignedRequest({ output: { text: 'x'.repeat(4000) } });
    const declared = await send(url, request);
    expect(declared.status).toBe(413);
    expect(declared.body.error?.code).toBe('ERR_BODY_TOO_LARGE');
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(request.body.subarray(0, 1500));
        controller.enqueue(request.body.subarray(1500));
        controller.close();
      },
    });
    const chunked = await fetch(url, { method: 'POST', headers: request.headers, body, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: { code: string } }).error.code).toBe('ERR_BODY_TOO_LARGE');
    expect(handled).toHaveLength(0);
    expect(middleware.receiver.stats().rejected['ERR_BODY_TOO_LARGE']).toBe(2);
  });

  it('415 when the content type is not JSON', async () => {
    const { url } = await start();
    const request = buildSignedRequest();
    const res = await send(url, { headers: { ...request.headers, 'content-type': 'text/plain' }, body: request.body });
    expect(res.status).toBe(415);
    expect(res.body.error?.code).toBe('ERR_UNSUPPORTED_MEDIA_TYPE');
  });

  it('405 + Allow: POST for a GET on the webhook path', async () => {
    const { url } = await start();
    const res = await fetch(url);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_METHOD_NOT_ALLOWED');
  });
});

describe('errors stay in the answer', () => {
  it('answers 500 ERR_INTERNAL when the receiver throws, and never calls next(err)', async () => {
    const real = createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => {} }).receiver;
    const broken = {
      ...real,
      precheck: (): never => {
        throw new Error('boom');
      },
    };
    const errors: unknown[] = [];
    running = await startApp((app) => {
      app.post('/hook', createExpressMiddleware(broken));
      app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        errors.push(err);
        res.status(599).end();
      });
    });
    const res = await send(`${running.url}/hook`, buildSignedRequest());
    expect(res.status).toBe(500);
    expect(res.body.error?.code).toBe('ERR_INTERNAL');
    expect(errors).toEqual([]);
  });

  it('keeps headers set by earlier middleware', async () => {
    const middleware = createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    running = await startApp((app) => {
      app.use((_req, res, next) => {
        res.setHeader('x-request-id', 'r-1');
        next();
      });
      app.post('/hook', middleware);
    });
    const res = await send(`${running.url}/hook`, buildSignedRequest());
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('r-1');
  });

  it('also serves a plain Node (req, res, next) server, which has no res.locals', async () => {
    const middleware = createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    const server = http.createServer((req, res) => middleware(req as express.Request, res as express.Response, () => {}));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await send(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, buildSignedRequest());
      expect(res.status).toBe(200);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('fails at construction, naming the package, when options are wrong', () => {
    expect(() => createExpressMiddleware({ publicKeys: keys.publicKeyPem })).toThrow(/@jobhook\/express/);
    expect(() => createExpressMiddleware(undefined as never)).toThrow(/@jobhook\/express/);
  });

  it('is a named function with the Express middleware arity', () => {
    const middleware = createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    expect(middleware.name).toBe('jobhookExpressMiddleware');
    expect(middleware.length).toBe(3);
  });
});

describe('{ path }', () => {
  it('handles only its path when mounted app-wide; other paths go on to next()', async () => {
    const handled: string[] = [];
    const middleware = createExpressMiddleware(
      { publicKeys: keys.publicKeyPem, onEvent: (e) => void handled.push(e.job_id) },
      { path: '/hook' },
    );
    running = await startApp((app) => {
      app.use(middleware);
      app.post('/other', (_req, res) => void res.status(202).json({ next: true }));
    });
    const request = buildSignedRequest();
    expect((await send(`${running.url}/hook`, request)).status).toBe(200);
    expect((await send(`${running.url}/other`, request)).status).toBe(202);
    expect(handled).toEqual([request.event.job_id]);
  });

  it('refuses a path that does not start with "/" at construction', () => {
    expect(() => createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => {} }, { path: 'hook' })).toThrow(
      /^@jobhook\/express: path must be a string starting with "\/"/,
    );
  });
});
