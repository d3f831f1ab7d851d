import Router from '@koa/router';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { createReceiver, type AsyncJobCompletedEvent } from '@jobhook/core';
import { createKoaMiddleware, jobhookRoute, type JobhookState } from '../src/index.js';
import { keys, listen, post, signed } from './helpers.js';

describe('jobhookRoute (@koa/router)', () => {
  async function start() {
    const handled: string[] = [];
    const router = new Router();
    const returned = jobhookRoute(router, '/webhooks/jobs', {
      publicKeys: keys.publicKeyPem,
      onEvent: (event) => {
        handled.push(event.job_id);
      },
    }).get('/health', (ctx) => {
      ctx.body = 'ok';
    });
    expect(returned).toBe(router);
    const app = new Koa();
    app.use(router.routes()).use(router.allowedMethods());
    return { base: await listen(app), handled };
  }

  it('handles POST on the path, once per job', async () => {
    const { base, handled } = await start();
    const request = signed();
    expect((await post(`${base}/webhooks/jobs`, request)).body).toEqual({ ok: true, job_id: request.event.job_id, duplicate: false });
    expect((await post(`${base}/webhooks/jobs`, request)).body.duplicate).toBe(true);
    expect(handled).toEqual([request.event.job_id]);
  });

  it.each(['GET', 'PUT', 'DELETE'])('answers %s on the path with the pipeline 405 + Allow: POST', async (method) => {
    const { base } = await start();
    const res = await fetch(`${base}/webhooks/jobs`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as any).error.code).toBe('ERR_METHOD_NOT_ALLOWED');
  });

  it('leaves the other routes alone', async () => {
    const { base } = await start();
    expect(await (await fetch(`${base}/health`)).text()).toBe('ok');
    expect((await fetch(`${base}/nope`, { method: 'POST' })).status).toBe(404);
  });

  it('the middleware also works as router.post(path, middleware), with the event on ctx.state for what follows', async () => {
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    const seen: (AsyncJobCompletedEvent | undefined)[] = [];
    const router = new Router<JobhookState>();
    router.post(
      '/hooks',
      async (ctx, next) => {
        await next();
        seen.push(ctx.state.jobhook?.event);
      },
      createKoaMiddleware(receiver),
    );
    const app = new Koa<JobhookState>();
    app.use(router.routes());
    const base = await listen(app);
    const request = signed();
    expect((await post(`${base}/hooks`, request)).status).toBe(200);
    expect(seen.map((e) => e?.job_id)).toEqual([request.event.job_id]);
  });
});
