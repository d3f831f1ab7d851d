import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import {
  JobhookError,
  createMemoryStore,
  createReceiver,
  type AsyncJobCompletedEvent,
  type IdempotencyStore,
  type ReceiverOptions,
} from '@jobhook/core';
import { signPayload } from '@jobhook/core/sign';
import { createKoaMiddleware, type JobhookState } from '../src/index.js';
import { gate, keys, listen, post, signed } from './helpers.js';

const PATH = '/webhooks/jobs';

async function start(options: Partial<ReceiverOptions> = {}) {
  const handled: AsyncJobCompletedEvent[] = [];
  const states: (AsyncJobCompletedEvent | undefined)[] = [];
  const kinds: (string | undefined)[] = [];
  const app = new Koa<JobhookState>();
  app.use(async (ctx, next) => {
    await next();
    states.push(ctx.state.jobhook?.event);
    kinds.push(ctx.state.jobhook?.outcome.kind);
  });
  app.use(
    createKoaMiddleware(
      {
        publicKeys: keys.publicKeyPem,
        onEvent: (event) => {
          handled.push(event);
        },
        ...options,
      },
      { path: PATH },
    ),
  );
  app.use((ctx) => {
    ctx.body = 'next';
  });
  const url = `${await listen(app)}${PATH}`;
  return { url, handled, states, kinds };
}

describe('createKoaMiddleware', () => {
  it('handles a success and a fail event, puts the event on ctx.state', async () => {
    const { url, handled, states } = await start();
    const ok = signed({ status: 'success' });
    const res = await post(url, ok);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ ok: true, job_id: ok.event.job_id, duplicate: false });
    const failed = signed({ status: 'fail' });
    expect((await post(url, failed)).body).toEqual({ ok: true, job_id: failed.event.job_id, duplicate: false });
    expect(handled.map((e) => [e.job_id, e.status])).toEqual([
      [ok.event.job_id, 'success'],
      [failed.event.job_id, 'fail'],
    ]);
    expect(states.map((e) => e?.job_id)).toEqual([ok.event.job_id, failed.event.job_id]);
  });

  it('answers a duplicate with 200 duplicate:true without running the handler again', async () => {
    const { url, handled, states } = await start();
    const request = signed();
    expect((await post(url, request)).body.duplicate).toBe(false);
    const again = await post(url, request);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ok: true, job_id: request.event.job_id, duplicate: true });
    expect(handled).toHaveLength(1);
    expect(states[1]?.job_id).toBe(request.event.job_id);
  });

  it('runs the handler once for 20 concurrent deliveries of one job', async () => {
    let runs = 0;
    const { url } = await start({
      onEvent: async () => {
        runs++;
        await new Promise((r) => setTimeout(r, 50));
      },
    });
    const request = signed();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(url, request)));
    expect(runs).toBe(1);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    expect(answers.filter((a) => a.status === 200 && !a.body.duplicate)).toHaveLength(1);
  });

  it('503 + Retry-After while the same job is handled (in flight)', async () => {
    const held = gate();
    const started = gate();
    const { url, states, kinds } = await start({
      onEvent: async () => {
        started.open();
        await held.promise;
      },
    });
    const request = signed();
    const first = post(url, request);
    await started.promise;
    const second = await post(url, request);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('30'); // a live holder: retryAfterSeconds
    expect(second.body.error.code).toBe('ERR_JOB_IN_FLIGHT');
    // The event is on ctx.state whatever the answer, with the outcome beside it.
    expect(states.map((e) => e?.job_id)).toEqual([request.event.job_id]);
    expect(kinds).toEqual(['in-flight']);
    held.open();
    expect((await first).status).toBe(200);
  });

  it('500 when the handler fails, and the retry runs it again', async () => {
    let calls = 0;
    const { url } = await start({
      onEvent: () => {
        if (++calls === 1) throw new Error('database down: secret details');
      },
    });
    const request = signed();
    const failed = await post(url, request);
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe('ERR_HANDLER_FAILED');
    expect(JSON.stringify(failed.body)).not.toContain('secret');
    expect((await post(url, request)).body).toEqual({ ok: true, job_id: request.event.job_id, duplicate: false });
    expect(calls).toBe(2);
  });

  it('503 + Retry-After when the handler outruns handlerTimeoutMs', async () => {
    const held = gate();
    const { url } = await start({ handlerTimeoutMs: 50, onEvent: () => held.promise });
    const res = await post(url, signed());
    held.open();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.body.error.code).toBe('ERR_HANDLER_TIMEOUT');
  });

  it('503 + Retry-After when the store is unavailable, handler not called', async () => {
    const memory = createMemoryStore();
    const store: IdempotencyStore = {
      ...memory,
      claim: () => Promise.reject(new JobhookError('ERR_STORE_UNAVAILABLE', 'redis is down')),
      complete: memory.complete.bind(memory),
      release: memory.release.bind(memory),
      extend: memory.extend.bind(memory),
      close: memory.close.bind(memory),
    };
    const { url, handled } = await start({ store });
    const res = await post(url, signed());
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.body.error.code).toBe('ERR_STORE_UNAVAILABLE');
    expect(handled).toHaveLength(0);
  });

  it.each([
    ['missing', undefined, 'ERR_SIGNATURE_MISSING'],
    ['malformed', 'not-hex!', 'ERR_SIGNATURE_MALFORMED'],
    ['of no configured key’s length', 'ab'.repeat(384), 'ERR_SIGNATURE_MALFORMED'],
    ['invalid', 'ab'.repeat(256), 'ERR_SIGNATURE_INVALID'],
  ])('401 when the signature is %s', async (_name, signature, code) => {
    const { url, handled } = await start();
    const res = await post(url, signed(), { 'x-service-signature': signature });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe(code);
    expect(handled).toHaveLength(0);
  });

  it('401 for a tampered body', async () => {
    const { url } = await start();
    const request = signed();
    const body = request.body.toString('utf8').replace(request.event.job_id, '00000000-0000-4000-8000-000000000000');
    const res = await post(url, { headers: request.headers, body });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('ERR_SIGNATURE_INVALID');
  });

  it.each([
    ['malformed JSON', '{"event": ', 'ERR_BODY_MALFORMED'],
    ['not an object', '[1, 2]', 'ERR_BODY_NOT_OBJECT'],
  ])('400 for a body that is %s', async (_name, body, code) => {
    const { url } = await start();
    const res = await post(url, { headers: signed().headers, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
  });

  it('400 for a verified payload that is not the event shape', async () => {
    const { url, handled } = await start();
    const { body, headers } = signPayload({ event: 'async_job_completed', job_id: 'j1', status: 'done' }, keys.privateKey);
    const res = await post(url, { headers, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ERR_PAYLOAD_INVALID');
    expect(handled).toHaveLength(0);
  });

  it('413 for a body over maxBodyBytes', async () => {
    const { url, handled } = await start({ maxBodyBytes: 256 });
    const res = await post(url, signed());
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('ERR_BODY_TOO_LARGE');
    expect(handled).toHaveLength(0);
  });

  it('415 for a content type other than JSON', async () => {
    const { url } = await start();
    const res = await post(url, signed(), { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('ERR_UNSUPPORTED_MEDIA_TYPE');
  });

  it('405 + Allow: POST for a GET on the webhook path', async () => {
    const { url } = await start();
    const res = await fetch(url);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as any).error.code).toBe('ERR_METHOD_NOT_ALLOWED');
  });

  it('calls next() for other paths when given a path', async () => {
    const { url, handled } = await start();
    const res = await fetch(url.replace(PATH, '/other'), signed());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('next');
    expect(handled).toHaveLength(0);
  });

  it('handles every request when no path is given (mounted by a router or koa-mount), without calling next()', async () => {
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    let after = 0;
    const app = new Koa();
    app.use(createKoaMiddleware(receiver));
    app.use(() => {
      after++;
    });
    const base = await listen(app);
    const request = signed();
    expect((await post(`${base}/anywhere`, request)).status).toBe(200);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(405);
    expect(after).toBe(0);
    expect(receiver.stats().handled).toBe(1);
  });

  it('takes a Receiver or its options, and checks them at construction', () => {
    expect(() => createKoaMiddleware({ publicKeys: keys.publicKeyPem } as ReceiverOptions)).toThrow(
      /^@jobhook\/koa: createReceiver: no handler/,
    );
    expect(() => createKoaMiddleware(null as unknown as ReceiverOptions)).toThrow(
      /@jobhook\/koa: receiverOrOptions must be a Receiver or receiver options, got null/,
    );
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    expect(() => createKoaMiddleware(receiver, { path: 'webhooks' })).toThrow(/@jobhook\/koa: path must be a string starting with "\/"/);
    expect(() => createKoaMiddleware(receiver, null as never)).toThrow(/@jobhook\/koa: options must be an object/);
    const middleware = createKoaMiddleware(receiver, { path: '/hooks' });
    expect(middleware.name).toBe('jobhookKoaMiddleware');
    expect(middleware.receiver).toBe(receiver);
    expect(typeof createKoaMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => {} }).receiver.stats).toBe('function');
  });
});
