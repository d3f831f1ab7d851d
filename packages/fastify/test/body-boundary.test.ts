// No body is read unless a configured key decodes its signature; an admitted body must arrive within
// bodyTimeoutMs. Real server, real sockets: the request stream's own `readableDidRead` says whether
// a byte of the body reached the application (Fastify's content parser included).
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type ReceiverOptions } from '@jobhook/core';
import { buildSignedRequest } from '@jobhook/core/testing';
import { admittedHead, buildApp, listen, MADE_UP_SIGNATURE, receiverOptions, sendUnfinishedBody } from './helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The app, and whether the request's body stream had been read when each answer was sent. */
async function start(options: Partial<ReceiverOptions> = {}) {
  const readWhenAnswered: boolean[] = [];
  const opts = receiverOptions(options);
  const receiver = createReceiver(opts);
  app = await buildApp({ receiver }, (fastify) => {
    fastify.addHook('onSend', async (request) => {
      readWhenAnswered.push(request.raw.readableDidRead);
    });
  });
  return { url: await listen(app), receiver, readWhenAnswered, calls: opts.calls };
}

describe('@jobhook/fastify: the body boundary', () => {
  it('a made-up signature of the right length: 401 with zero body bytes read, connection closed', async () => {
    const { url, receiver, readWhenAnswered, calls } = await start();
    const res = await sendUnfinishedBody(url, admittedHead(MADE_UP_SIGNATURE));
    expect([res.status, res.body.error?.code]).toEqual([401, 'ERR_SIGNATURE_INVALID']);
    expect(readWhenAnswered).toEqual([false]);
    expect(res.connection).toBe('close');
    await res.closedByServer;
    expect(calls).toEqual([]);
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
    const { url, receiver, calls } = await start({ bodyTimeoutMs: 1000, retryAfterSeconds: 7 });
    const res = await sendUnfinishedBody(url, admittedHead(buildSignedRequest().signature));
    expect([res.status, res.body.error?.code]).toEqual([503, 'ERR_BODY_TIMEOUT']);
    expect(res.retryAfter).toBe('7');
    expect(res.answeredAfterMs).toBeGreaterThanOrEqual(950);
    expect(res.connection).toBe('close');
    await res.closedByServer;
    expect(calls).toEqual([]);
    expect(receiver.stats()).toMatchObject({ rejected: { ERR_BODY_TIMEOUT: 1 }, bodyBytesInFlight: 0 });
  });
});
