import Router from '@koa/router';
import Koa from 'koa';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { VerifiedWebhook } from '@jobhook/core';
import { createKoaMiddleware, jobhookRoute, type JobhookState } from '../src/index.js';
import { keys } from './helpers.js';

describe('types', () => {
  it('mounts on apps and routers with their own state, and types ctx.state.jobhook', () => {
    const options = { publicKeys: keys.publicKeyPem, onEvent: () => {} };
    const app = new Koa<{ user?: string }>();
    app.use(async (ctx, next) => {
      await next();
      expectTypeOf(ctx.state.user).toEqualTypeOf<string | undefined>();
    });
    const mounted = app.use(createKoaMiddleware(options, { path: '/hooks' }));
    mounted.use((ctx) => {
      expectTypeOf(ctx.state.jobhook).toEqualTypeOf<VerifiedWebhook | undefined>();
    });

    const router = new Router<{ user?: string }>();
    expectTypeOf(jobhookRoute(router, '/hooks', options)).toEqualTypeOf(router);
    router.post('/other', createKoaMiddleware(options));
    expect(router.stack.map((layer) => layer.path)).toEqual(['/hooks', '/other']);

    expectTypeOf<JobhookState>().toEqualTypeOf<{ jobhook?: VerifiedWebhook }>();
  });
});
