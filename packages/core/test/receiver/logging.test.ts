import { afterEach, describe, expect, it, vi } from 'vitest';
import { createJsonLogger, createReceiver, JobhookError, type Logger } from '../../src/index.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';

const keys = createTestKeyPair();

function capture(level?: 'debug' | 'info' | 'warn' | 'error' | 'silent'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createJsonLogger({ ...(level === undefined ? {} : { level }), write: (line) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

afterEach(() => void vi.useRealTimers());

describe('createJsonLogger: pino lines', () => {
  it("writes pino's fields and numeric levels, from level warn by default", () => {
    const { logger, lines } = capture();
    logger.info({ a: 1 }, 'not written');
    logger.warn({ a: 1 }, 'careful');
    logger.error({ n: 2n ** 70n }, 'broken');
    expect(lines).toEqual([
      { level: 40, time: expect.any(Number), pid: process.pid, hostname: expect.any(String), a: 1, msg: 'careful' },
      { level: 50, time: expect.any(Number), pid: process.pid, hostname: expect.any(String), n: '1180591620717411303424', msg: 'broken' },
    ]);
  });

  it('serializes err as pino does (type, message, stack, code, cause), a JobhookError included', () => {
    const { logger, lines } = capture('debug');
    const cause = Object.assign(new Error('ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    logger.error({ err: new JobhookError('ERR_STORE_UNAVAILABLE', 'the idempotency store failed', { cause }) }, 'x');
    expect(lines[0]!['err']).toEqual({
      type: 'JobhookError',
      message: 'the idempotency store failed',
      stack: expect.stringContaining('the idempotency store failed'),
      code: 'ERR_STORE_UNAVAILABLE',
      cause: { type: 'Error', message: 'ECONNREFUSED 127.0.0.1:6379', stack: expect.any(String), code: 'ECONNREFUSED' },
    });
  });

  it('refuses an unknown level or a write that is not a function: ERR_OPTION_INVALID naming the option', () => {
    expect(() => createJsonLogger({ level: 'verbose' as 'info' })).toThrow(
      expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringMatching(/^createJsonLogger: level .*"verbose"/) }),
    );
    expect(() => createJsonLogger({ level: 'toString' as 'info' })).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    expect(() => createJsonLogger({ write: 'stderr' as unknown as (line: string) => void })).toThrow(
      expect.objectContaining({
        code: 'ERR_OPTION_INVALID',
        message: expect.stringContaining('createJsonLogger: write must be a function'),
      }),
    );
  });

  it('keeps the line when a field cannot be written (a cycle), and writes nothing at level silent', () => {
    const { logger, lines } = capture();
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    logger.error(cyclic, 'still here');
    expect(lines).toEqual([expect.objectContaining({ level: 50, logError: 'fields not serializable', msg: 'still here' })]);
    const silent = capture('silent');
    silent.logger.error({}, 'x');
    expect(silent.lines).toEqual([]);
  });
});

describe("the receiver's log lines", () => {
  it('refusals of bad requests: one warn line per error code per minute, the next one counting what was held back', async () => {
    // The window runs on the monotonic clock: a wall clock stepped back an hour holds nothing back.
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const { logger, lines } = capture();
    const r = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger });
    const signed = buildSignedRequest({}, { privateKey: keys.privateKey });
    const forged = { ...signed, rawBody: Buffer.from(signed.rawBody.toString('utf8').replace('Hello', 'Jello')) };
    for (let i = 0; i < 100; i++) await r.handle({ ...forged, method: 'GET' });
    for (let i = 0; i < 50; i++) await r.handle(forged);
    expect(lines.map((l) => [l['level'], l['code'], l['suppressed']])).toEqual([
      [40, 'ERR_METHOD_NOT_ALLOWED', undefined],
      [40, 'ERR_SIGNATURE_INVALID', undefined],
    ]);
    vi.setSystemTime(Date.now() - 3_600_000);
    vi.advanceTimersByTime(60_000);
    await r.handle({ ...forged, method: 'GET' });
    expect(lines[2]).toMatchObject({ level: 40, code: 'ERR_METHOD_NOT_ALLOWED', suppressed: 99, reason: 'webhooks are POSTed; got GET' });
    // Every request is still counted.
    expect(r.stats().rejected).toEqual({ ERR_METHOD_NOT_ALLOWED: 101, ERR_SIGNATURE_INVALID: 50 });
  });

  it('500 refusals anyone can cause (ERR_INTERNAL here) are limited per code too, still at error with err', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const { logger, lines } = capture();
    const r = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger });
    // A headers object that throws when read: a bug's stand-in, answered 500 ERR_INTERNAL.
    const headers = new Proxy(
      {},
      {
        get: () => {
          throw new Error('headers exploded');
        },
        ownKeys: () => {
          throw new Error('headers exploded');
        },
      },
    );
    const request = { method: 'POST', headers: headers as Record<string, string>, rawBody: '{}' };
    for (let i = 0; i < 20; i++) expect((await r.handle(request)).status).toBe(500);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        kind: 'rejected',
        code: 'ERR_INTERNAL',
        err: expect.objectContaining({ message: 'headers exploded', stack: expect.any(String) }),
      }),
    ]);
    vi.advanceTimersByTime(60_000);
    await r.handle(request);
    expect(lines[1]).toMatchObject({ level: 50, code: 'ERR_INTERNAL', suppressed: 19 });
    expect(r.stats().rejected).toEqual({ ERR_INTERNAL: 21 });
  });

  it('handler failures are never limited: one error line each', async () => {
    const { logger, lines } = capture();
    const r = createReceiver({
      publicKeys: keys.publicKeyPem,
      onEvent: () => {
        throw new Error('orders table is locked');
      },
      logger,
    });
    for (let i = 0; i < 3; i++) await r.handle(buildSignedRequest({}, { privateKey: keys.privateKey }));
    expect(lines.map((l) => [l['level'], l['code']])).toEqual([
      [50, 'ERR_HANDLER_FAILED'],
      [50, 'ERR_HANDLER_FAILED'],
      [50, 'ERR_HANDLER_FAILED'],
    ]);
  });

  it('handled and duplicate deliveries at info; a store outage at error with its cause', async () => {
    const { logger, lines } = capture('info');
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const r = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger });
    const request = buildSignedRequest({}, { privateKey: keys.privateKey });
    await r.handle(request);
    await r.handle(request);
    const broken = createReceiver({
      publicKeys: keys.publicKeyPem,
      onEvent: () => {},
      logger,
      store: {
        claim: () => Promise.reject(down),
        complete: async () => true,
        release: async () => true,
        extend: async () => true,
        close: async () => {},
      },
    });
    await broken.handle(request);
    expect(lines.map((l) => [l['level'], l['kind']])).toEqual([
      [30, 'handled'],
      [30, 'duplicate'],
      [50, 'store-unavailable'],
    ]);
    expect(lines[2]!['err']).toMatchObject({ message: 'connect ECONNREFUSED', code: 'ECONNREFUSED' });
  });
});
