// The plugin inside a Fastify app: encapsulation of its parser, the request decoration, body
// parsers and hooks of the app, registration rules and options; mostly through app.inject.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { JobhookError, createReceiver, type ReceiverOptions, type VerifiedWebhook } from '@jobhook/core';
import { captureRawBody, jobhookFastify } from '../src/index.js';
import { PLUGIN_NAME } from '../src/plugin-options.js';
import { PATH, buildApp, keys, listen, post, receiverOptions, signed } from './helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function inject(target: FastifyInstance, request: { headers: Record<string, string>; body: Buffer }, url = PATH) {
  return target.inject({ method: 'POST', url, headers: request.headers, payload: request.body });
}

describe('@jobhook/fastify: inside an app', () => {
  it('handles and deduplicates through app.inject', async () => {
    const options = receiverOptions();
    app = await buildApp(options);
    const request = signed();
    expect((await inject(app, request)).json()).toEqual({ ok: true, job_id: request.event.job_id, duplicate: false });
    expect((await inject(app, request)).json()).toEqual({ ok: true, job_id: request.event.job_id, duplicate: true });
    expect(options.calls).toHaveLength(1);
  });

  it('keeps Fastify’s JSON parser for the other routes of the app', async () => {
    app = await buildApp(receiverOptions(), (a) => {
      a.post('/api/echo', async (req) => ({ type: typeof req.body, body: req.body }));
    });
    const url = await listen(app, '/api/echo');
    const res = await post(url, { headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' });
    expect(res.json).toEqual({ type: 'object', body: { a: [1, 2] } });
    // ...and the app still answers Fastify's own 415 elsewhere.
    const plain = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<x/>' });
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as { code: string }).code).toBe('FST_ERR_CTP_INVALID_MEDIA_TYPE');
  });

  it('is not affected by a JSON parser the app registered before it (the route has its own)', async () => {
    let appParserRuns = 0;
    app = await buildApp(receiverOptions(), (a) => {
      a.removeContentTypeParser('application/json');
      a.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
        appParserRuns++;
        done(null, JSON.parse(body as string));
      });
      a.post('/api/echo', async (req) => req.body);
    });
    expect((await inject(app, signed())).statusCode).toBe(200);
    expect(appParserRuns).toBe(0);
    await app.inject({ method: 'POST', url: '/api/echo', payload: { a: 1 } });
    expect(appParserRuns).toBe(1);
  });

  it('sets request.jobhook = { event, outcome } once verified, whatever the answer; not on rejections', async () => {
    const seen: Array<VerifiedWebhook | undefined> = [];
    let fail = false;
    app = await buildApp(
      receiverOptions({
        onEvent: () => {
          if (fail) throw new Error('handler down');
        },
      }),
      (a) => {
        a.addHook('onResponse', async (req: FastifyRequest) => {
          seen.push(req.jobhook);
        });
      },
    );
    const request = signed();
    await inject(app, request);
    await inject(app, request);
    await inject(app, { headers: request.headers, body: Buffer.from('{}') });
    fail = true;
    const failing = signed();
    expect((await inject(app, failing)).statusCode).toBe(500);
    expect(seen[0]?.event.job_id).toBe(request.event.job_id);
    expect(seen[0]?.outcome).toMatchObject({ kind: 'handled', status: 200 });
    expect(seen[1]?.outcome).toMatchObject({ kind: 'duplicate', status: 200 });
    expect(seen[2]).toBeUndefined();
    expect(seen[3]?.event.job_id).toBe(failing.event.job_id);
    expect(seen[3]?.outcome).toMatchObject({ kind: 'handler-failed', status: 500 });
  });

  describe('a hook of the app that replaces the body (a JSON parser before jobhook)', () => {
    function parseInHook(keepBytes: boolean) {
      return (a: FastifyInstance): void => {
        a.addHook('preHandler', async (req, reply) => {
          if (!Buffer.isBuffer(req.body)) return;
          if (keepBytes) captureRawBody(req, reply, req.body);
          req.body = JSON.parse(req.body.toString('utf8'));
        });
      };
    }

    it('answers 500 ERR_BODY_ALREADY_PARSED saying how to fix it, never verifying the object', async () => {
      const options = receiverOptions();
      app = await buildApp(options, parseInHook(false));
      const res = await inject(app, signed());
      expect(res.statusCode).toBe(500);
      expect(res.json().error.code).toBe('ERR_BODY_ALREADY_PARSED');
      expect(res.json().error.message).toContain(PLUGIN_NAME);
      expect(res.json().error.message).toContain('captureRawBody');
      expect(options.calls).toEqual([]);
    });

    it('verifies the bytes kept with captureRawBody', async () => {
      const options = receiverOptions();
      app = await buildApp(options, parseInHook(true));
      const request = signed();
      expect((await inject(app, request)).statusCode).toBe(200);
      expect(options.calls).toEqual([request.event.job_id]);
    });
  });

  it('leaves errors of the app’s own hooks to the app’s error handler', async () => {
    app = await buildApp(receiverOptions(), (a) => {
      a.setErrorHandler((err, _req, reply) => reply.code(418).send({ teapot: (err as Error).message }));
      a.addHook('onRequest', async () => {
        throw new Error('auth hook said no');
      });
    });
    const res = await inject(app, signed());
    expect(res.statusCode).toBe(418);
    expect(res.json()).toEqual({ teapot: 'auth hook said no' });
  });

  it('takes a receiver made with createReceiver, and does not close it with the app', async () => {
    const calls: string[] = [];
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: (e) => void calls.push(e.job_id) });
    let closed = 0;
    // A receiver of your own making (here, the real one's methods with another close).
    app = await buildApp({ receiver: { ...receiver, close: async () => void closed++ } });
    const request = signed();
    expect((await inject(app, request)).statusCode).toBe(200);
    expect(receiver.stats().handled).toBe(1);
    await app.close();
    app = undefined;
    expect(closed).toBe(0);
    await receiver.close();
  });

  it('serves several paths with their own receivers, and honours the context prefix', async () => {
    const a = receiverOptions();
    const b = receiverOptions();
    app = Fastify();
    app.register(jobhookFastify(a, { path: '/hooks/a' }));
    app.register(
      async (scoped) => {
        scoped.register(jobhookFastify(b, { path: '/hooks/b' }));
      },
      { prefix: '/v2' },
    );
    await app.ready();
    const first = signed();
    const second = signed();
    expect((await inject(app, first, '/hooks/a')).statusCode).toBe(200);
    expect((await inject(app, second, '/v2/hooks/b')).statusCode).toBe(200);
    expect((await inject(app, second, '/hooks/b')).statusCode).toBe(404);
    expect(a.calls).toEqual([first.event.job_id]);
    expect(b.calls).toEqual([second.event.job_id]);
    expect(app.hasPlugin(PLUGIN_NAME)).toBe(true);
  });
});

describe('@jobhook/fastify: registration errors', () => {
  async function readyError(register: (a: FastifyInstance) => void): Promise<unknown> {
    const a = Fastify();
    register(a);
    try {
      await a.ready();
    } catch (err) {
      return err;
    } finally {
      await a.close().catch(() => {});
    }
    return undefined;
  }

  it('refuses a second registration on the same path, naming the plugin', async () => {
    const err = await readyError((a) => {
      a.register(jobhookFastify(receiverOptions()));
      a.register(jobhookFastify(receiverOptions()));
    });
    expect(err).toBeInstanceOf(JobhookError);
    expect((err as JobhookError).code).toBe('ERR_OPTION_INVALID');
    expect((err as Error).message).toMatch(/^@jobhook\/fastify: POST \/webhooks\/jobs is already routed; is the plugin registered twice/);
  });

  it('refuses the same path registered from two sibling contexts', async () => {
    const err = await readyError((a) => {
      a.register(async (s) => void s.register(jobhookFastify(receiverOptions())));
      a.register(async (s) => void s.register(jobhookFastify(receiverOptions())));
    });
    expect((err as Error).message).toContain('@jobhook/fastify: POST /webhooks/jobs is already routed');
  });

  it.each([
    ['no publicKeys', { onEvent: () => {} }, undefined, /^@jobhook\/fastify: createReceiver: publicKeys is required/],
    [
      'no handler',
      { publicKeys: keys.publicKeyPem },
      undefined,
      /^@jobhook\/fastify: .*no handler: give onEvent, or both onSuccess and onFail/,
    ],
    ['a relative path', receiverOptions(), { path: 'hooks' }, /^@jobhook\/fastify: path must be a string starting with "\/"/],
    ['options that are not an object', receiverOptions(), 'hooks', /^@jobhook\/fastify: options must be an object/],
    [
      'a receiver that is not one',
      { handle: async () => ({}) },
      undefined,
      /^@jobhook\/fastify: receiver must have handle, precheck and stats methods \(a Receiver, made by createReceiver\(\)\), got an object/,
    ],
  ])('throws ERR_OPTION_INVALID at construction for %s', (_name, receiverOrOptions, options, message) => {
    let err: unknown;
    try {
      jobhookFastify(receiverOrOptions as ReceiverOptions, options as never);
    } catch (caught) {
      err = caught;
    }
    expect((err as JobhookError).code).toBe('ERR_OPTION_INVALID');
    expect((err as Error).message).toMatch(message);
  });
});
