// Every row of core's response table, through a real listening Fastify server and fetch.
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { JobhookError, createMemoryStore, type IdempotencyStore } from '@jobhook/core';
import { buildApp, listen, post, receiverOptions, signed, sleep } from './helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(options: Parameters<typeof buildApp>[0]): Promise<string> {
  app = await buildApp(options);
  return listen(app);
}

describe('@jobhook/fastify: the response table over HTTP', () => {
  it('200 handled for a success event, then 200 duplicate without running the handler again', async () => {
    const options = receiverOptions();
    const url = await serve(options);
    const request = signed({ status: 'success' });
    const first = await post(url, request);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    expect(first.json).toEqual({ ok: true, job_id: request.event.job_id, duplicate: false });
    const second = await post(url, request);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ ok: true, job_id: request.event.job_id, duplicate: true });
    expect(options.calls).toEqual([request.event.job_id]);
  });

  it('200 handled for a fail event, through onFail', async () => {
    const failed: string[] = [];
    const url = await serve({
      publicKeys: receiverOptions().publicKeys,
      onSuccess: () => {},
      onFail: (event) => void failed.push(event.error.message),
    });
    const request = signed({ status: 'fail' });
    const res = await post(url, request);
    expect(res.status).toBe(200);
    expect(res.json.duplicate).toBe(false);
    expect(failed).toEqual(['Provider returned an error']);
  });

  it('runs the handler once for 20 parallel deliveries of one job (the rest: duplicate or 503 in flight)', async () => {
    let runs = 0;
    const url = await serve(
      receiverOptions({
        onEvent: async () => {
          runs++;
          await sleep(100);
        },
      }),
    );
    const request = signed();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(url, request)));
    expect(runs).toBe(1);
    expect(answers.filter((a) => a.status === 200 && a.json.duplicate === false)).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 503) {
        expect(a.json.error.code).toBe('ERR_JOB_IN_FLIGHT');
        expect(a.headers.get('retry-after')).toBe('30'); // a live holder: retryAfterSeconds
      } else {
        expect(a.status).toBe(200);
      }
    }
    expect((await post(url, request)).json.duplicate).toBe(true);
  });

  it('503 + Retry-After while the same job is being handled', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let running!: () => void;
    const inHandler = new Promise<void>((resolve) => (running = resolve));
    const url = await serve(
      receiverOptions({
        onEvent: () => {
          running();
          return blocked;
        },
        retryAfterSeconds: 7,
      }),
    );
    const request = signed();
    const first = post(url, request);
    await inHandler; // the first delivery is in its handler
    const second = await post(url, request);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('7');
    expect(second.json.error.code).toBe('ERR_JOB_IN_FLIGHT');
    release();
    expect((await first).status).toBe(200);
  });

  it('500 when the handler fails, and the retry runs it again', async () => {
    let attempts = 0;
    const url = await serve(
      receiverOptions({
        onEvent: () => {
          if (++attempts === 1) throw new Error('database down: secret detail');
        },
      }),
    );
    const request = signed();
    const failed = await post(url, request);
    expect(failed.status).toBe(500);
    expect(failed.json.error.code).toBe('ERR_HANDLER_FAILED');
    expect(JSON.stringify(failed.json)).not.toContain('secret detail');
    expect((await post(url, request)).status).toBe(200);
    expect(attempts).toBe(2);
  });

  it('503 + Retry-After when the handler outruns handlerTimeoutMs', async () => {
    const url = await serve(receiverOptions({ handlerTimeoutMs: 50, onEvent: () => sleep(300) }));
    const res = await post(url, signed());
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe('ERR_HANDLER_TIMEOUT');
    expect(res.headers.get('retry-after')).toBe('30');
  });

  it('503 + Retry-After when the idempotency store is unavailable (handler not called)', async () => {
    const memory = createMemoryStore();
    const store: IdempotencyStore = {
      claim: () => Promise.reject(new JobhookError('ERR_STORE_UNAVAILABLE', 'redis: connection refused')),
      complete: memory.complete.bind(memory),
      release: memory.release.bind(memory),
      extend: memory.extend.bind(memory),
      close: memory.close.bind(memory),
    };
    const options = receiverOptions({ store });
    const url = await serve(options);
    const res = await post(url, signed());
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe('ERR_STORE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).toBe('30');
    expect(options.calls).toEqual([]);
  });

  describe('401', () => {
    it('signature header missing', async () => {
      const url = await serve(receiverOptions());
      const { 'x-service-signature': _dropped, ...headers } = signed().headers;
      const res = await post(url, { headers, body: signed().body });
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('ERR_SIGNATURE_MISSING');
    });

    it('signature not hex', async () => {
      const url = await serve(receiverOptions());
      const request = signed();
      const res = await post(url, { headers: { ...request.headers, 'x-service-signature': 'not-hex!' }, body: request.body });
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('ERR_SIGNATURE_MALFORMED');
    });

    it('signature not verifying (tampered body), handler not called', async () => {
      const options = receiverOptions();
      const url = await serve(options);
      const request = signed();
      const tampered = Buffer.from(request.body.toString().replace('Hello', 'Jello'));
      const res = await post(url, { headers: request.headers, body: tampered });
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('ERR_SIGNATURE_INVALID');
      expect(options.calls).toEqual([]);
    });
  });

  describe('400', () => {
    it('body not JSON', async () => {
      const url = await serve(receiverOptions());
      const res = await post(url, { headers: signed().headers, body: '{"event": ' });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('ERR_BODY_MALFORMED');
    });

    it('body not an object', async () => {
      const url = await serve(receiverOptions());
      const res = await post(url, { headers: signed().headers, body: '[1, 2]' });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('ERR_BODY_NOT_OBJECT');
    });

    it('verified body not of the event shape', async () => {
      const options = receiverOptions();
      const url = await serve(options);
      const res = await post(url, signed({ job_id: undefined }));
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('ERR_PAYLOAD_INVALID');
      expect(res.json.error.message).toContain('job_id');
      expect(options.calls).toEqual([]);
    });
  });

  it('413 for a body over maxBodyBytes', async () => {
    const options = receiverOptions({ maxBodyBytes: 2048 });
    const url = await serve(options);
    const request = signed({ output: { raw_text: 'x'.repeat(4096) } });
    const res = await post(url, request);
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('ERR_BODY_TOO_LARGE');
    expect(options.calls).toEqual([]);
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['application/json; charset=latin1'], ['not a media type']])(
    '415 for Content-Type %s (the pipeline answer, not Fastify’s)',
    async (type) => {
      const url = await serve(receiverOptions());
      const request = signed();
      const res = await post(url, { headers: { ...request.headers, 'content-type': type }, body: request.body });
      expect(res.status).toBe(415);
      expect(res.json.error.code).toBe('ERR_UNSUPPORTED_MEDIA_TYPE');
    },
  );

  it('415 for a POST without Content-Type', async () => {
    const url = await serve(receiverOptions());
    const res = await fetch(url, { method: 'POST' });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_UNSUPPORTED_MEDIA_TYPE');
  });

  it.each([['GET'], ['PUT'], ['PATCH'], ['DELETE']])('405 + Allow: POST for %s on the webhook path', async (method) => {
    const url = await serve(receiverOptions());
    const request = signed();
    const res = await fetch(url, method === 'GET' ? { method } : { method, headers: request.headers, body: request.body });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_METHOD_NOT_ALLOWED');
  });

  it('405 for HEAD (no body)', async () => {
    const url = await serve(receiverOptions());
    const res = await fetch(url, { method: 'HEAD' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});
