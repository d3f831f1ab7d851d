/**
 * The client against a small real HTTP server that injects the faults a real service shows now and
 * then: 429 with Retry-After, 503, dropped connections, answers that never come.
 *
 * What depends on time (pauses, deadlines, Retry-After, abort) runs on virtual time: fake timers and
 * the same service in process (`service.fetch`), so the assertions are exact and a busy machine
 * cannot make them fail; over real HTTP only lower bounds are checked (timers never fire early).
 */
import { JobhookError } from '@jobhook/core';
import { rawJson } from '@jobhook/core/json';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, DEFAULT_MAX_ANSWER_BYTES, ServiceApiError, type Client, type ServiceErrorCode } from '../src/index.js';
import { BROKE_KEY, GOOD_KEY, pollsOf, startFakeService, type FakeService } from './helpers/fake-service.js';

let service: FakeService;
let client: Client;

beforeAll(async () => {
  service = await startFakeService();
  client = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, timeoutMs: 2_000 });
});
afterAll(() => service.close());
afterEach(() => {
  service.faults.length = 0;
});

async function rejection(promise: Promise<unknown>): Promise<ServiceApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceApiError);
  return err as ServiceApiError;
}

async function submit(simulate: Record<string, unknown> = {}): Promise<string> {
  const { job_id } = await client.submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'f', simulate } });
  return job_id;
}

describe('requests', () => {
  it('sends the bearer key, a user agent and the submission with exact numbers', async () => {
    const before = service.requests.length;
    const params = rawJson('{"price": 1.0, "big": 123456789012345678901234567890, "tiny": 1e-07}');
    await client.submitJob({
      model: 'ocr/ocr_async/amazon',
      input: { file: 'f', n: 2n ** 70n },
      webhook_receiver: 'https://hooks.example.com/x',
      user_webhook_parameters: params,
      show_original_response: true,
    });
    const sent = service.requests[before]!;
    expect(sent.headers.authorization).toBe(`Bearer ${GOOD_KEY}`);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['user-agent']).toMatch(/^jobhook-client\/\d+\.\d+\.\d+$/);
    expect(sent.body).toBe(
      '{"model":"ocr/ocr_async/amazon","input":{"file":"f","n":1180591620717411303424},' +
        '"webhook_receiver":"https://hooks.example.com/x",' +
        '"user_webhook_parameters":{"price": 1.0, "big": 123456789012345678901234567890, "tiny": 1e-07},' +
        '"show_original_response":true}',
    );
  });

  it('polls a job to success and to fail', async () => {
    const ok = await submit({ delay_ms: 60, output: { text: 'hi', pages: 2 } });
    const done = await client.pollJob(ok, { intervalMs: 20 });
    expect(done).toMatchObject({ job_id: ok, status: 'success', output: { text: 'hi', pages: 2 }, cost: '0.01' });
    expect(pollsOf(service, ok).length).toBeGreaterThan(1);

    const bad = await submit({ outcome: 'fail' });
    const failed = await client.pollJob(bad, { intervalMs: 20 });
    expect(failed.status).toBe('fail');
    if (failed.status === 'fail') expect(failed.error).toEqual({ message: 'Provider failed', error_code: 'provider_error' });
  });

  it('maps 401, 402 and 404 to typed errors, with the detail, without retrying', async () => {
    const cases: [() => Promise<unknown>, ServiceErrorCode, number, string][] = [
      [
        () => createClient({ baseUrl: service.url, apiKey: 'nope' }).pollJob('x', { intervalMs: 10 }),
        'ERR_UNAUTHORIZED',
        401,
        'Invalid token.',
      ],
      [
        () => createClient({ baseUrl: service.url, apiKey: BROKE_KEY }).submitJob({ model: 'a/b/c', input: {} }),
        'ERR_PAYMENT_REQUIRED',
        402,
        'Insufficient credits.',
      ],
      [() => client.pollJob('00000000-0000-4000-8000-000000000000', { intervalMs: 10 }), 'ERR_NOT_FOUND', 404, 'Not found.'],
    ];
    for (const [call, code, status, detail] of cases) {
      const before = service.requests.length;
      const err = await rejection(call());
      expect([err.code, err.status, err.detail, err.retryable]).toEqual([code, status, detail, false]);
      expect(err.message).toContain(`HTTP ${status}: ${detail}`);
      // The call has settled, so its poll loop is over: any retry would have been sent before.
      expect(service.requests.length - before).toBe(1);
    }
  });
});

describe('pollJob retries', () => {
  it('waits out a 429 Retry-After, retries 503s and a dropped connection, then succeeds', async () => {
    const jobId = await submit();
    service.faults.push({ status: 429, headers: { 'retry-after': '1' } }, { status: 503 }, 'destroy', { status: 502 });
    const job = await client.pollJob(jobId, { intervalMs: 10, maxIntervalMs: 40 });
    expect(job.status).toBe('success');
    const polls = pollsOf(service, jobId);
    expect(polls).toHaveLength(5);
    expect(polls[1]!.at - polls[0]!.at).toBeGreaterThanOrEqual(990); // Retry-After: 1 honoured (the short backoff: below, on virtual time)
  });

  it('times a single hanging request out on timeoutMs, over real HTTP', async () => {
    const jobId = await submit({ delay_ms: -1 });
    service.faults.push('hang');
    const quick = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, timeoutMs: 100 });
    const one = await rejection(quick.getJob(jobId));
    expect([one.code, one.status, one.retryable]).toEqual(['ERR_TIMEOUT', null, true]);
  });

  describe('on virtual time', () => {
    let virtual: Client;
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
      virtual = createClient({ baseUrl: 'http://fake-service.test', apiKey: GOOD_KEY, timeoutMs: 2_000, fetch: service.fetch });
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    /** Runs `call` to its end on virtual time; returns its outcome and the virtual ms it took. */
    async function run<T>(call: () => Promise<T>): Promise<{ value?: T; error?: unknown; took: number }> {
      const started = performance.now();
      let outcome: { value?: T; error?: unknown } | undefined;
      void call().then(
        (value) => (outcome = { value }),
        (error: unknown) => (outcome = { error }),
      );
      for (let i = 0; outcome === undefined; i++) {
        if (i > 10_000) throw new Error('the call did not settle');
        await vi.advanceTimersToNextTimerAsync();
      }
      return { ...outcome, took: performance.now() - started };
    }

    async function submitVirtual(simulate: Record<string, unknown>): Promise<string> {
      const { value } = await run(() => virtual.submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'f', simulate } }));
      return value!.job_id;
    }

    const gapsOf = (jobId: string) => {
      const at = pollsOf(service, jobId).map((r) => r.at);
      return at.slice(1).map((t, i) => t - at[i]!);
    };

    it('waits out a 429 Retry-After exactly, retries 503s, a dropped connection and a 502 on the backoff', async () => {
      const jobId = await submitVirtual({});
      service.faults.push({ status: 429, headers: { 'retry-after': '1' } }, { status: 503 }, 'destroy', { status: 502 });
      const { value, took } = await run(() => virtual.pollJob(jobId, { intervalMs: 10, maxIntervalMs: 40 }));
      expect(value?.status).toBe('success');
      // Retry-After: 1 s, then the pauses 15, 23 (22.5 rounded), 35 (×1.5 each).
      expect(gapsOf(jobId)).toEqual([1_000, 15, 23, 35]);
      expect(took).toBe(1_073);
    });

    it('grows the pause ×1.5 up to maxIntervalMs', async () => {
      const jobId = await submitVirtual({ delay_ms: 700 });
      const { value } = await run(() => virtual.pollJob(jobId, { intervalMs: 40, maxIntervalMs: 100 }));
      expect(value?.status).toBe('success');
      // Uncapped the pauses would go on 135, 202, 303 ms.
      expect(gapsOf(jobId)).toEqual([40, 60, 90, 100, 100, 100, 100, 100, 100]);
    });

    it('gives up with ERR_TIMEOUT at timeoutMs, naming the last status', async () => {
      const jobId = await submitVirtual({ delay_ms: -1 });
      const { error, took } = await run(() => virtual.pollJob(jobId, { intervalMs: 20, timeoutMs: 200 }));
      expect(error).toBeInstanceOf(ServiceApiError);
      expect((error as ServiceApiError).code).toBe('ERR_TIMEOUT');
      expect((error as ServiceApiError).message).toContain('last status: processing');
      expect(took).toBe(200);
    });

    it('keeps the deadline while requests hang', async () => {
      const jobId = await submitVirtual({ delay_ms: -1 });
      service.faults.push('hang', 'hang');
      const { error, took } = await run(() => virtual.pollJob(jobId, { intervalMs: 20, timeoutMs: 150 }));
      expect((error as ServiceApiError).code).toBe('ERR_TIMEOUT');
      // The hanging request's own timeout (2 s) is cut to the time left.
      expect(took).toBe(150);
      service.faults.length = 0;
    });

    it('stops on abort at once, in a pause or mid-request, with the signal reason', async () => {
      const jobId = await submitVirtual({ delay_ms: -1 });
      for (const fault of [undefined, 'hang' as const]) {
        if (fault !== undefined) service.faults.push(fault);
        const controller = new AbortController();
        let outcome: unknown;
        void virtual.pollJob(jobId, { intervalMs: 500, signal: controller.signal }).then(
          () => (outcome = 'resolved'),
          (e: unknown) => (outcome = e),
        );
        await vi.advanceTimersByTimeAsync(50); // in the 500 ms pause, or in the hanging request
        expect(outcome).toBeUndefined();
        const abortedAt = performance.now();
        controller.abort();
        await vi.advanceTimersByTimeAsync(0); // microtasks only: no timer may be needed
        expect((outcome as Error | undefined)?.name).toBe('AbortError');
        expect(performance.now()).toBe(abortedAt);
        expect(vi.getTimerCount()).toBe(0); // the pause's and the request's timers are cleared
      }
    });

    it('does not retry 401, 402 and 404: one request, no timer left', async () => {
      const cases: [() => Promise<unknown>, number][] = [
        [
          () =>
            createClient({ baseUrl: 'http://fake-service.test', apiKey: 'nope', fetch: service.fetch }).pollJob('x', { intervalMs: 10 }),
          401,
        ],
        [
          () =>
            createClient({ baseUrl: 'http://fake-service.test', apiKey: BROKE_KEY, fetch: service.fetch }).submitJob({
              model: 'a/b/c',
              input: {},
            }),
          402,
        ],
        [() => virtual.pollJob('00000000-0000-4000-8000-000000000000', { intervalMs: 10 }), 404],
      ];
      for (const [call, status] of cases) {
        const before = service.requests.length;
        const { error, took } = await run(call);
        expect((error as ServiceApiError).status).toBe(status);
        expect(took).toBe(0);
        expect(vi.getTimerCount()).toBe(0);
        expect(service.requests.length - before).toBe(1);
      }
    });
  });

  it('does not follow a redirect: ERR_HTTP naming the Location, not retried', async () => {
    service.faults.push({ status: 307, headers: { location: 'https://elsewhere.example.com/' } });
    const before = service.requests.length;
    const err = await rejection(client.pollJob('x', { intervalMs: 10 }));
    expect([err.code, err.status, err.retryable]).toEqual(['ERR_HTTP', 307, false]);
    expect(err.message).toContain('redirect to https://elsewhere.example.com/ not followed');
    expect(service.requests.length - before).toBe(1);
  });

  it('reports a refused connection as ERR_NETWORK (retryable)', async () => {
    const closed = await startFakeService();
    await closed.close();
    const err = await rejection(createClient({ baseUrl: closed.url, apiKey: GOOD_KEY }).getJob('x'));
    expect([err.code, err.status, err.retryable]).toEqual(['ERR_NETWORK', null, true]);
    expect(err.message).toContain('ECONNREFUSED');
  });
});

describe('options', () => {
  it('throws ERR_OPTION_INVALID at construction, naming the option', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ apiKey: 'k' }, 'baseUrl'],
      [{ baseUrl: 'ftp://x', apiKey: 'k' }, 'baseUrl'],
      [{ baseUrl: 'http://x', apiKey: 'k k' }, 'apiKey'],
      [{ baseUrl: 'http://x', apiKey: 'k\n' }, 'apiKey'],
      [{ baseUrl: 'http://x', apiKey: 'k', timeoutMs: 0 }, 'timeoutMs'],
      // Above 2^31 - 1 ms Node's timers fire at once: refused rather than a timeout that never waits.
      [{ baseUrl: 'http://x', apiKey: 'k', timeoutMs: 2 ** 31 }, 'timeoutMs'],
      [{ baseUrl: 'http://x', apiKey: 'k', maxAnswerBytes: 1.5 }, 'maxAnswerBytes'],
      [{ baseUrl: 'http://x', apiKey: 'k', maxAnswerBytes: 2 ** 30 + 1 }, 'maxAnswerBytes'],
    ];
    for (const [options, name] of bad) {
      let err: unknown;
      try {
        createClient(options as never);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(JobhookError);
      expect(err).toMatchObject({ code: 'ERR_OPTION_INVALID' });
      expect((err as Error).message).toContain(name);
    }
    await expect(client.pollJob('j', { intervalMs: 100, maxIntervalMs: 50 })).rejects.toThrow(/maxIntervalMs/);
  });

  it('gives up on an answer larger than maxAnswerBytes instead of buffering it, with or without Content-Length', async () => {
    const small = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, maxAnswerBytes: 1024 });
    const answer = (pad: string): string => JSON.stringify({ job_id: 'big', status: 'processing', pad });
    for (const headers of [{}, { 'transfer-encoding': 'chunked' }]) {
      service.faults.push({ status: 200, headers, body: answer('x'.repeat(1024)) });
      const err = await rejection(small.getJob('big'));
      expect([err.code, err.status, err.retryable]).toEqual(['ERR_ANSWER_TOO_LARGE', 200, false]);
      expect(err.message).toContain('larger than maxAnswerBytes (1024 bytes)');
    }
    // An answer of exactly the limit is read whole.
    const exact = answer('x'.repeat(1024 - answer('').length));
    expect(Buffer.byteLength(exact)).toBe(1024);
    service.faults.push({ status: 200, headers: { 'transfer-encoding': 'chunked' }, body: exact });
    expect(await small.getJob('big')).toMatchObject({ job_id: 'big', status: 'processing' });
  });

  it('reads answers up to DEFAULT_MAX_ANSWER_BYTES (4 MiB) by default, not a byte more', async () => {
    const patient = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, timeoutMs: 600_000 });
    const head = '{"job_id":"big","status":"processing","pad":"';
    const sized = (bytes: number): string => `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
    expect(DEFAULT_MAX_ANSWER_BYTES).toBe(4 * 1024 * 1024);
    service.faults.push({ status: 200, headers: { 'transfer-encoding': 'chunked' }, body: sized(DEFAULT_MAX_ANSWER_BYTES) });
    expect(await patient.getJob('big')).toMatchObject({ job_id: 'big' });
    service.faults.push({ status: 200, headers: { 'transfer-encoding': 'chunked' }, body: sized(DEFAULT_MAX_ANSWER_BYTES + 1) });
    expect((await rejection(patient.getJob('big'))).code).toBe('ERR_ANSWER_TOO_LARGE');
  });

  it('an error answer with a huge body keeps the code of its status (the body is not read for its detail)', async () => {
    const small = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, maxAnswerBytes: 1024 });
    service.faults.push({ status: 503, headers: { 'transfer-encoding': 'chunked' }, body: `{"detail":"${'x'.repeat(100 * 1024)}"}` });
    const err = await rejection(small.getJob('big'));
    expect([err.code, err.status, err.detail]).toEqual(['ERR_SERVICE_UNAVAILABLE', 503, null]);
  });

  it('keeps a base URL path prefix', async () => {
    const prefixed = createClient({ baseUrl: `${service.url}/api/`, apiKey: GOOD_KEY });
    expect(prefixed.baseUrl).toBe(`${service.url}/api`);
    const err = await rejection(prefixed.getJob('abc'));
    expect(err.code).toBe('ERR_NOT_FOUND');
    expect(service.requests.at(-1)!.path).toBe('/api/v3/universal-ai/async/abc');
  });
});
