import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import {
  createMemoryStore,
  createReceiver,
  JobhookError,
  type IdempotencyStore,
  type ReceiverOptions,
  type ReceiverOutcome,
} from '../../src/index.js';
import { buildSignedRequest, buildTestEvent, createTestKeyPair, signTestEvent } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

/** `base` with its `extend` replaced (a spy), the other methods delegated. */
function withExtend(base: IdempotencyStore, extend: IdempotencyStore['extend']): IdempotencyStore {
  return {
    claim: (id, o) => base.claim(id, o),
    complete: (id, t, o) => base.complete(id, t, o),
    release: (id, t) => base.release(id, t),
    close: () => base.close(),
    extend,
  };
}

function receiver(options: Partial<ReceiverOptions> = {}, recordingOnEvent = true) {
  const handled: string[] = [];
  const outcomes: ReceiverOutcome[] = [];
  const r = createReceiver({
    publicKeys: keys.publicKeyPem,
    ...(recordingOnEvent ? { onEvent: (event: { job_id: string }) => void handled.push(event.job_id) } : {}),
    onOutcome: (o) => outcomes.push(o),
    ...options,
  });
  return { r, handled, outcomes };
}

describe('receive pipeline: the response table', () => {
  it('200 for a verified success event, handler called once with the verified payload', async () => {
    const onSuccess = vi.fn();
    const { r } = receiver({ onSuccess, onFail: () => {} }, false);
    const req = buildSignedRequest({ status: 'success', user_parameters: { n: 123456789012345678901234567890n } });
    const res = await r.handle(req);
    expect(res.status).toBe(200);
    expect(json(res.body)).toEqual({ ok: true, job_id: req.event.job_id, duplicate: false });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(onSuccess).toHaveBeenCalledTimes(1);
    const [event, ctx] = onSuccess.mock.calls[0]!;
    // JSON-safe by default: the digits, as a string JSON.stringify keeps whole.
    expect(event.user_parameters.n).toBe('123456789012345678901234567890');
    expect(ctx).toMatchObject({ jobId: req.event.job_id, profile: 'python', keyId: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(res.outcome).toMatchObject({ kind: 'handled', status: 200, jobId: req.event.job_id, eventStatus: 'success' });
  });

  it("bigIntegers: 'bigint' hands big integers over as bigint", async () => {
    const onEvent = vi.fn();
    const { r } = receiver({ onEvent, bigIntegers: 'bigint' }, false);
    const res = await r.handle(buildSignedRequest({ user_parameters: { n: 123456789012345678901234567890n } }));
    expect(res.status).toBe(200);
    expect(onEvent.mock.calls[0]![0].user_parameters.n).toBe(123456789012345678901234567890n);
    expect(() => receiver({ onEvent, bigIntegers: 'number' as 'string' })).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
  });

  it('routes fail events to onFail, then onEvent', async () => {
    const calls: string[] = [];
    const { r } = receiver({
      onSuccess: () => void calls.push('success'),
      onFail: (e) => void calls.push(`fail:${e.error.message}`),
      onEvent: (e) => void calls.push(`event:${e.status}`),
    });
    const res = await r.handle(buildSignedRequest({ status: 'fail' }));
    expect(res.status).toBe(200);
    expect(calls).toEqual(['fail:Provider returned an error', 'event:fail']);
  });

  it('200 duplicate without calling the handler again', async () => {
    const { r, handled } = receiver();
    const req = buildSignedRequest();
    expect((await r.handle(req)).status).toBe(200);
    const again = await r.handle(req);
    expect(again.status).toBe(200);
    expect(json(again.body)).toEqual({ ok: true, job_id: req.event.job_id, duplicate: true });
    expect(again.outcome.kind).toBe('duplicate');
    expect(handled).toEqual([req.event.job_id]);
  });

  it('503 + Retry-After while the same job is being handled, then 200 duplicate', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running!: () => void;
    const inHandler = new Promise<void>((resolve) => (running = resolve));
    const { r, handled } = receiver({
      onEvent: async (e) => {
        running();
        await gate;
        handled.push(e.job_id);
      },
    });
    const req = buildSignedRequest();
    const first = r.handle(req);
    await inHandler; // the first delivery is in its handler
    const second = await r.handle(req);
    expect(second.status).toBe(503);
    // A live holder renews its lease: the sender is told retryAfterSeconds, not the lease's end.
    expect(second.headers['retry-after']).toBe('30');
    expect(json(second.body)).toMatchObject({ error: { code: 'ERR_JOB_IN_FLIGHT' } });
    release();
    // A lease with less than half of leaseMs left is no longer renewed (its holder died or stalled):
    // the sender comes back when it ends; a store that gives no number gets retryAfterSeconds.
    for (const [leftMs, expected] of [
      [4_200, '5'],
      [9_999, '10'],
      [10_000, '30'],
      [Number.NaN, '30'],
    ] as const) {
      const stalled = receiver({
        store: { ...createMemoryStore(), claim: async () => ({ state: 'in-flight', retryAfterMs: leftMs }) } as IdempotencyStore,
      }).r;
      expect((await stalled.handle(buildSignedRequest())).headers['retry-after'], String(leftMs)).toBe(expected);
    }
    expect((await first).status).toBe(200);
    expect((await r.handle(req)).outcome.kind).toBe('duplicate');
    expect(handled).toHaveLength(1);
  });

  it('500 when the handler throws, claim released, the retry handles it', async () => {
    let attempts = 0;
    const { r } = receiver({
      onEvent: () => {
        attempts++;
        if (attempts === 1) throw new Error('database down: password=hunter2');
      },
    });
    const req = buildSignedRequest();
    const failed = await r.handle(req);
    expect(failed.status).toBe(500);
    expect(json(failed.body)).toMatchObject({ error: { code: 'ERR_HANDLER_FAILED' } });
    expect(failed.body).not.toContain('hunter2'); // the handler's message stays in the logs
    const retried = await r.handle(req);
    expect(retried.status).toBe(200);
    expect(attempts).toBe(2);
    expect(r.stats()).toMatchObject({ handled: 1, handlerFailures: 1 });
  });

  it('503 when the handler outruns handlerTimeoutMs; the claim is kept until it settles, then completed', async () => {
    let finish!: () => void;
    let signal: AbortSignal | undefined;
    let runs = 0;
    const { r } = receiver({
      handlerTimeoutMs: 50,
      onEvent: (_e, ctx) => {
        runs++;
        signal = ctx.signal;
        return new Promise<void>((resolve) => (finish = resolve));
      },
    });
    const req = buildSignedRequest();
    const slow = await r.handle(req);
    expect(slow.status).toBe(503);
    expect(slow.headers['retry-after']).toBe('30');
    expect(json(slow.body)).toMatchObject({ error: { code: 'ERR_HANDLER_TIMEOUT' } });
    expect(signal?.aborted).toBe(true);
    // The sender's retry arrives while the first run still works: not run twice at once.
    expect((await r.handle(req)).outcome.kind).toBe('in-flight');
    finish();
    await vi.waitFor(async () => expect((await r.handle(req)).outcome.kind).toBe('duplicate'), { timeout: 30_000 }); // a hang guard only
    expect(runs).toBe(1);
  });

  it('renews the lease while a slow handler runs', async () => {
    const extend = vi.fn(async () => true);
    let finish!: () => void;
    const store = withExtend(receiver().r.store, extend);
    const { r } = receiver({ store, leaseMs: 60, onEvent: () => new Promise<void>((resolve) => (finish = resolve)) });
    // Fake timers: the handler "runs" for as long as they are advanced, however busy the machine.
    vi.useFakeTimers();
    try {
      const pending = r.handle(buildSignedRequest());
      await vi.advanceTimersByTimeAsync(100); // longer than the 60 ms lease
      expect(extend.mock.calls.length).toBeGreaterThanOrEqual(2);
      finish();
      expect((await pending).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a lease lost while the handler runs (the process stalled past it): renewals stop, ctx.signal aborts, another delivery may run the job', async () => {
    // The store's clock jumps past the lease, as if this process or Redis had stalled that long.
    const clock = { t: 0, now: () => clock.t };
    const base = createMemoryStore({ clock });
    const extend = vi.fn((id: string, token: string, o: { leaseMs: number }) => base.extend(id, token, o));
    const store = withExtend(base, extend);
    const log = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    let firstRun = true;
    let reason: unknown;
    const { r } = receiver({
      store,
      leaseMs: 60,
      logger: log,
      onEvent: async (_event, ctx) => {
        if (!firstRun) return;
        firstRun = false;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reason = ctx.signal.reason;
        throw new Error('stopped');
      },
    });
    // Fake timers drive the renewals, so "no renewal afterwards" is checked by advancing time past
    // many renewal periods rather than by sleeping and hoping one would have come.
    vi.useFakeTimers();
    try {
      const req = buildSignedRequest();
      const first = r.handle(req);
      while (extend.mock.calls.length === 0) await vi.advanceTimersByTimeAsync(10);
      clock.t += 1000;
      while (reason === undefined) await vi.advanceTimersByTimeAsync(10);
      expect(reason).toBeInstanceOf(Error);
      expect((reason as Error).message).toMatch(/lease was lost/);
      expect(log.warn).toHaveBeenCalledWith({ jobId: expect.any(String) }, expect.stringMatching(/lease lost/));
      expect((await first).status).toBe(500); // the handler threw when it stopped
      const calls = extend.mock.calls.length;
      await vi.advanceTimersByTimeAsync(1000); // 50 renewal periods of a 60 ms lease
      expect(extend.mock.calls.length).toBe(calls); // no renewal of a lost lease
      expect((await r.handle(req)).outcome.kind).toBe('handled'); // the next delivery runs it
    } finally {
      vi.useRealTimers();
    }
  });

  it('renewals failing (store unreachable) for longer than the lease: ctx.signal aborts, as the lease must be gone', async () => {
    const base = createMemoryStore();
    const extend = vi.fn(async () => {
      throw new JobhookError('ERR_STORE_UNAVAILABLE', 'redis: connection refused');
    });
    let reason: unknown;
    const { r } = receiver({
      store: withExtend(base, extend),
      leaseMs: 90,
      onEvent: async (_event, ctx) => {
        const started = performance.now();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reason = { message: (ctx.signal.reason as Error).message, afterMs: performance.now() - started };
      },
    });
    expect((await r.handle(buildSignedRequest())).status).toBe(200);
    expect(reason).toMatchObject({ message: expect.stringMatching(/lease was lost/) });
    // Not before the lease could have run out (renewals every 30 ms, each failing).
    expect((reason as { afterMs: number }).afterMs).toBeGreaterThanOrEqual(85);
  });

  it('a handler done just before handlerTimeoutMs is answered 200 even when completing the claim is slow', async () => {
    const base = createMemoryStore();
    const store: IdempotencyStore = {
      ...withExtend(base, (id, t, o) => base.extend(id, t, o)),
      complete: async (id, t, o) => {
        await new Promise((resolve) => setTimeout(resolve, 150)); // a slow store round trip
        return base.complete(id, t, o);
      },
    };
    const { r } = receiver({ store, handlerTimeoutMs: 100, onEvent: () => new Promise<void>((resolve) => setTimeout(resolve, 50)) });
    const res = await r.handle(buildSignedRequest());
    expect([res.status, res.outcome.kind]).toEqual([200, 'handled']);
  });

  it('503 when the store is unreachable, and the handler is not called', async () => {
    const broken: IdempotencyStore = {
      claim: async () => {
        throw new JobhookError('ERR_STORE_UNAVAILABLE', 'redis: connection refused');
      },
      complete: async () => true,
      release: async () => true,
      extend: async () => true,
      close: async () => {},
    };
    const { r, handled } = receiver({ store: broken });
    const res = await r.handle(buildSignedRequest());
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(json(res.body)).toMatchObject({ error: { code: 'ERR_STORE_UNAVAILABLE' } });
    expect(handled).toEqual([]);
    // A store that throws something else is still a 503, never a crash.
    const weird = receiver({
      store: {
        ...broken,
        claim: async () => {
          throw new TypeError('boom');
        },
      },
    });
    expect((await weird.r.handle(buildSignedRequest())).status).toBe(503);
  });

  const signedBody = () => buildSignedRequest();
  const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  it.each([
    [
      'no signature header',
      401,
      'ERR_SIGNATURE_MISSING',
      () => {
        const q = signedBody();
        delete q.headers['x-service-signature'];
        return q;
      },
    ],
    [
      'signature not hex',
      401,
      'ERR_SIGNATURE_MALFORMED',
      () => {
        const q = signedBody();
        q.headers['x-service-signature'] = 'xyz';
        return q;
      },
    ],
    [
      'signature of another body',
      401,
      'ERR_SIGNATURE_INVALID',
      () => {
        const q = signedBody();
        q.headers['x-service-signature'] = signTestEvent().signature;
        return q;
      },
    ],
    ['signed by another key', 401, 'ERR_SIGNATURE_INVALID', () => buildSignedRequest({}, { privateKey: otherKey })],
    [
      'signed by a key of another size',
      401,
      'ERR_SIGNATURE_MALFORMED',
      () => buildSignedRequest({}, { privateKey: createTestKeyPair(3072).privateKey }),
    ],
    [
      'unsupported hash algorithm',
      401,
      'ERR_HASH_ALGORITHM_UNSUPPORTED',
      () => {
        const q = signedBody();
        q.headers['x-service-hash-algorithm'] = 'SHA1';
        return q;
      },
    ],
    ['body not JSON', 400, 'ERR_BODY_MALFORMED', () => ({ ...signedBody(), rawBody: Buffer.from('not json') })],
    ['body a JSON array', 400, 'ERR_BODY_NOT_OBJECT', () => ({ ...signedBody(), rawBody: Buffer.from('[1]') })],
    ['verified but not the payload shape', 400, 'ERR_PAYLOAD_INVALID', () => buildSignedRequest({ job_id: 'not-a-uuid' })],
    ['verified, success without output', 400, 'ERR_PAYLOAD_INVALID', () => buildSignedRequest({ output: undefined })],
    ['body over the limit', 413, 'ERR_BODY_TOO_LARGE', () => ({ ...signedBody(), rawBody: Buffer.alloc(2 * 1024 * 1024, 0x20) })],
    [
      'not JSON content type',
      415,
      'ERR_UNSUPPORTED_MEDIA_TYPE',
      () => {
        const q = signedBody();
        q.headers['content-type'] = 'text/plain';
        return q;
      },
    ],
    [
      'JSON in a charset other than UTF-8',
      415,
      'ERR_UNSUPPORTED_MEDIA_TYPE',
      () => {
        const q = signedBody();
        q.headers['content-type'] = 'application/json; charset=latin1';
        return q;
      },
    ],
    [
      'no content type',
      415,
      'ERR_UNSUPPORTED_MEDIA_TYPE',
      () => {
        const q = signedBody();
        delete q.headers['content-type'];
        return q;
      },
    ],
    ['GET', 405, 'ERR_METHOD_NOT_ALLOWED', () => ({ ...signedBody(), method: 'GET' as const })],
  ] as const)('%s → %i %s, handler not called', async (_name, status, code, make) => {
    const { r, handled } = receiver();
    const res = await r.handle(make() as Parameters<typeof r.handle>[0]);
    expect(res.status).toBe(status);
    expect(json(res.body)).toEqual({ error: { code, message: expect.any(String) } });
    expect(res.outcome).toMatchObject({ kind: 'rejected', status, code });
    expect(handled).toEqual([]);
    expect(r.stats().rejected[code as keyof ReturnType<typeof r.stats>['rejected']]).toBe(1);
    if (status === 405) expect(res.headers['allow']).toBe('POST');
  });

  it('names the invalid field', async () => {
    const { r } = receiver();
    const res = await r.handle(buildSignedRequest({ status: 'fail', error: { message: 42 } }));
    expect(json(res.body)).toMatchObject({
      error: { code: 'ERR_PAYLOAD_INVALID', message: 'payload.error.message must be a string, got a number' },
    });
  });
});

describe('receive pipeline: details', () => {
  it('accepts error: null on success and output: null on fail, and keeps unknown fields', async () => {
    const seen: unknown[] = [];
    const { r } = receiver({ onEvent: (e) => void seen.push(e) });
    expect((await r.handle(buildSignedRequest({ error: null, extra: { x: 1 } }))).status).toBe(200);
    expect((await r.handle(buildSignedRequest({ status: 'fail', output: null, cost: '0.25' }))).status).toBe(200);
    expect(seen[0]).toMatchObject({ extra: { x: 1 } });
  });

  it('reads headers case-insensitively, from records and from fetch Headers, with custom names', async () => {
    const { r } = receiver({ headerNames: { signature: 'X-Sig' } });
    const req = buildSignedRequest({}, { headerNames: { signature: 'X-Sig' } });
    const upper = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect((await r.handle({ ...req, headers: upper })).status).toBe(200);
    const req2 = buildSignedRequest({}, { headerNames: { signature: 'X-Sig' } });
    expect((await r.handle({ ...req2, headers: new Headers(req2.headers) })).status).toBe(200);
  });

  it('counts every outcome and calls onOutcome once per request', async () => {
    const { r, outcomes } = receiver();
    const req = buildSignedRequest();
    await r.handle(req);
    await r.handle(req);
    await r.handle({ ...req, method: 'PUT' });
    expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'duplicate', 'rejected']);
    expect(r.stats()).toMatchObject({ received: 3, verified: 2, handled: 1, duplicates: 1, rejected: { ERR_METHOD_NOT_ALLOWED: 1 } });
  });

  it('logs through a pino-compatible logger', async () => {
    const lines: Array<[string, object, string | undefined]> = [];
    const logger = Object.fromEntries(
      (['debug', 'info', 'warn', 'error'] as const).map((level) => [level, (obj: object, msg?: string) => lines.push([level, obj, msg])]),
    ) as unknown as NonNullable<ReceiverOptions['logger']>;
    const { r } = receiver({ logger });
    await r.handle(buildSignedRequest());
    await r.handle({ ...buildSignedRequest(), method: 'GET' });
    expect(lines.map(([level, , msg]) => `${level} ${msg}`)).toEqual([
      'info jobhook: webhook handled',
      'warn jobhook: webhook refused (ERR_METHOD_NOT_ALLOWED); one line per code per minute',
    ]);
  });

  it('answers an admission refuse() for bodies an adapter refused, and gives back its share of the read budget', () => {
    const { r } = receiver();
    const { admission } = r.precheck(buildSignedRequest());
    expect(admission!.charge!(100)).toBeUndefined();
    expect(r.stats().bodyBytesInFlight).toBe(100);
    const res = admission!.refuse(new JobhookError('ERR_BODY_TOO_LARGE', 'body over 1048576 bytes'));
    expect(res.status).toBe(413);
    expect(r.stats()).toMatchObject({ received: 1, rejected: { ERR_BODY_TOO_LARGE: 1 }, bodyBytesInFlight: 0 });
  });

  it('refuses a body over maxBodyBytes handed to admission.receive by a reader that did not stop at maxBytes', async () => {
    const { r, handled } = receiver({ maxBodyBytes: 4096 });
    const request = buildSignedRequest();
    const { admission } = r.precheck(request);
    const res = await admission!.receive(Buffer.alloc(4097, 0x20));
    expect(res.status).toBe(413);
    expect(json(res.body)).toMatchObject({ error: { code: 'ERR_BODY_TOO_LARGE', message: 'body has 4097 bytes; the limit is 4096' } });
    expect(handled).toHaveLength(0);
    expect(r.stats()).toMatchObject({ received: 1, verified: 0, rejected: { ERR_BODY_TOO_LARGE: 1 }, bodyBytesInFlight: 0 });
  });

  it('never rejects, even on a broken request object', async () => {
    const { r } = receiver();
    const res = await r.handle({ method: 'POST', headers: null as never, rawBody: Buffer.from('{}') });
    expect(res.status).toBe(500);
    expect(json(res.body)).toMatchObject({ error: { code: 'ERR_INTERNAL' } });
  });

  it('refuses bad options at construction, naming them', () => {
    const base = { publicKeys: keys.publicKeyPem, onEvent: () => {} };
    expect(() => createReceiver({ ...base, publicKeys: undefined as never })).toThrow(/publicKeys is required/);
    expect(() => createReceiver({ publicKeys: keys.publicKeyPem })).toThrow(/no handler: give onEvent, or both onSuccess and onFail/);
    expect(() => createReceiver({ publicKeys: keys.publicKeyPem, onSuccess: () => {} })).toThrow(
      /"fail" events would be acknowledged without running anything: give onFail or onEvent/,
    );
    expect(() => createReceiver({ publicKeys: keys.publicKeyPem, onFail: () => {} })).toThrow(/"success" events would be acknowledged/);
    expect(() => createReceiver({ ...base, leaseMs: 0 })).toThrow(/leaseMs must be an integer/);
    expect(() => createReceiver({ ...base, handlerTimeoutMs: 1.5 })).toThrow(/handlerTimeoutMs/);
    // Timers past 2^31-1 ms fire after 1 ms in Node: every delivery would time out, the lease renew in a loop.
    expect(() => createReceiver({ ...base, handlerTimeoutMs: 3e9 })).toThrow(/handlerTimeoutMs must be an integer from 1 to 2147483647/);
    expect(() => createReceiver({ ...base, leaseMs: 7e9, doneTtlMs: 8e9 })).toThrow(/leaseMs must be an integer from 30 to 2147483647/);
    expect(() => createReceiver({ ...base, doneTtlMs: 30 * 24 * 3600 * 1000 })).not.toThrow(); // an expiry, not a timer
    expect(() => createReceiver({ ...base, doneTtlMs: 1000, leaseMs: 5000 })).toThrow(/doneTtlMs/);
    expect(() => createReceiver({ ...base, logger: console as never })).not.toThrow();
    expect(() => createReceiver({ ...base, logger: {} as never })).toThrow(/logger/);
    expect(() => createReceiver({ ...base, headerNames: { signature: 'bad header' } })).toThrow(/headerNames.signature/);
    expect(() => createReceiver({ ...base, store: {} as never })).toThrow(/store must have claim, complete, release and extend methods/);
    expect(() => createReceiver({ ...base, publicKeys: 'nope' })).toThrow(JobhookError);
  });

  it('buildTestEvent makes valid events of both branches', () => {
    expect(buildTestEvent().status).toBe('success');
    expect(buildTestEvent({ status: 'fail' })).toMatchObject({ error: { message: expect.any(String) } });
  });
});
