// No body is read unless a configured key decodes its signature; an admitted body must arrive within
// bodyTimeoutMs. Real server, real sockets: the request stream's own `readableDidRead` says whether
// a byte of the body reached the application.
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import type { ReceiverOptions } from '@jobhook/core';
import { buildSignedRequest } from '@jobhook/core/testing';
import { createKoaMiddleware } from '../src/index.js';
import { admittedHead, keys, listen, MADE_UP_SIGNATURE, sendUnfinishedBody } from './helpers.js';

/** The app, and whether the request's body stream had been read when the middleware had answered. */
async function start(options: Partial<ReceiverOptions> = {}) {
  const readWhenAnswered: boolean[] = [];
  let runs = 0;
  const middleware = createKoaMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => void runs++, ...options });
  const app = new Koa();
  app.use(async (ctx, next) => {
    await next();
    readWhenAnswered.push(ctx.req.readableDidRead);
  });
  app.use(middleware);
  return { url: await listen(app), receiver: middleware.receiver, readWhenAnswered, runs: () => runs };
}

describe('@jobhook/koa: the body boundary', () => {
  it('a made-up signature of the right length: 401 with zero body bytes read, connection closed', async () => {
    const { url, receiver, readWhenAnswered, runs } = await start();
    const res = await sendUnfinishedBody(url, admittedHead(MADE_UP_SIGNATURE));
    expect([res.status, res.body.error?.code]).toEqual([401, 'ERR_SIGNATURE_INVALID']);
    expect(readWhenAnswered).toEqual([false]);
    expect(res.connection).toBe('close');
    await res.closedByServer;
    expect(runs()).toBe(0);
    expect(receiver.stats()).toMatchObject({ verified: 0, bodyBytesInFlight: 0 });
  });

  it('a replayed real signature: the body is read (the same probe says so)', async () => {
    const { url, readWhenAnswered } = await start();
    // One delivery's signature over another delivery's body.
    const [first, other] = [buildSignedRequest(), buildSignedRequest()];
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...other.headers, 'x-service-signature': first.signature },
      body: other.body,
    });
    expect(res.status).toBe(401);
    expect(readWhenAnswered).toEqual([true]);
  });

  it('bodyTimeoutMs 1000: a body that stops coming is answered 503 ERR_BODY_TIMEOUT with Retry-After after about 1 s', async () => {
    const { url, receiver, runs } = await start({ bodyTimeoutMs: 1000, retryAfterSeconds: 7 });
    const res = await sendUnfinishedBody(url, admittedHead(buildSignedRequest().signature));
    expect([res.status, res.body.error?.code]).toEqual([503, 'ERR_BODY_TIMEOUT']);
    expect(res.retryAfter).toBe('7');
    expect(res.answeredAfterMs).toBeGreaterThanOrEqual(950);
    expect(res.connection).toBe('close');
    await res.closedByServer;
    expect(runs()).toBe(0);
    expect(receiver.stats()).toMatchObject({ rejected: { ERR_BODY_TIMEOUT: 1 }, bodyBytesInFlight: 0 });
  });
});
