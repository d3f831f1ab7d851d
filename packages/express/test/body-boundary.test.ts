// No body is read unless a configured key decodes its signature; an admitted body must arrive within
// bodyTimeoutMs. Real server, real sockets: the request stream's own `readableDidRead` says whether
// a byte of the body reached the application.
import { afterEach, describe, expect, it } from 'vitest';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import type { ReceiverOptions } from '@jobhook/core';
import { createExpressMiddleware, type ExpressWebhookMiddleware } from '../src/index.js';
import { admittedHead, MADE_UP_SIGNATURE, sendUnfinishedBody, startApp, type RunningApp } from './helpers.js';

const keys = createTestKeyPair();
let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** The app, and whether the request's body stream had been read when each answer's head was written. */
async function start(options: Partial<ReceiverOptions> = {}) {
  const readWhenAnswered: boolean[] = [];
  let runs = 0;
  const middleware: ExpressWebhookMiddleware = createExpressMiddleware({
    publicKeys: keys.publicKeyPem,
    onEvent: () => void runs++,
    ...options,
  });
  running = await startApp((app) =>
    app.post(
      '/hook',
      (req, res, next) => {
        const writeHead = res.writeHead;
        res.writeHead = ((...args: Parameters<typeof writeHead>) => {
          readWhenAnswered.push(req.readableDidRead);
          return writeHead.apply(res, args);
        }) as typeof writeHead;
        next();
      },
      middleware,
    ),
  );
  return { url: `${running.url}/hook`, middleware, readWhenAnswered, runs: () => runs };
}

describe('@jobhook/express: the body boundary', () => {
  it('a made-up signature of the right length: 401 with zero body bytes read, connection closed', async () => {
    const { url, middleware, readWhenAnswered, runs } = await start();
    const res = await sendUnfinishedBody(url, admittedHead(MADE_UP_SIGNATURE));
    expect([res.status, res.body.error?.code]).toEqual([401, 'ERR_SIGNATURE_INVALID']);
    expect(readWhenAnswered).toEqual([false]);
    expect(res.connection).toBe('close');
    await res.closedByServer;
    expect(runs()).toBe(0);
    expect(middleware.receiver.stats()).toMatchObject({ verified: 0, bodyBytesInFlight: 0 });
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
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_SIGNATURE_INVALID');
    expect(readWhenAnswered).toEqual([true]);
  });

  it('bodyTimeoutMs 1000: a body that stops coming is answered 503 ERR_BODY_TIMEOUT with Retry-After after about 1 s', async () => {
    const { url, middleware, runs } = await start({ bodyTimeoutMs: 1000, retryAfterSeconds: 7 });
    const res = await sendUnfinishedBody(url, admittedHead(buildSignedRequest().signature));
    expect([res.status, res.body.error?.code]).toEqual([503, 'ERR_BODY_TIMEOUT']);
    expect(res.retryAfter).toBe('7');
    expect(res.answeredAfterMs).toBeGreaterThanOrEqual(950);
    expect(res.connection).toBe('close');
    await res.closedByServer;
    expect(runs()).toBe(0);
    expect(middleware.receiver.stats()).toMatchObject({ rejected: { ERR_BODY_TIMEOUT: 1 }, bodyBytesInFlight: 0 });
  });
});
