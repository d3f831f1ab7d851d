/**
 * The receiver's OpenTelemetry spans, exported by the SDK's in-memory exporter with the
 * AsyncLocalStorage context manager (what NodeSDK sets up): one jobhook.webhook span per delivery,
 * through receiver.handle and through an adapter (precheck, then the admission), with its
 * attributes; jobhook.handler under it and the handler's own spans under that; statuses for
 * failures, refusals, a busy receiver and a timeout; receiver.handlePolled's jobhook.poll span; and no span
 * at all without a tracer, even with a global provider registered.
 */
import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createFetchHandler,
  createMemoryStore,
  createReceiver,
  JobhookError,
  silentLogger,
  type HandlerContext,
  type ReceiverOptions,
} from '../../src/index.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';
import { SPAN_ATTRIBUTES, SPAN_NAMES } from '../../src/tracing/index.js';

const keys = createTestKeyPair();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
// Typed as the API's Tracer: the receiver's option takes it as it is.
const tracer: Tracer = provider.getTracer('jobhook-test');
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(async () => {
  context.disable();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((s) => s.name === name);
const one = (name: string): ReadableSpan => {
  const found = named(name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
};
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan): string => span.spanContext().spanId;

/** A handler that starts a span of its own, as application code (a database client, ...) would. */
async function userHandler(_event: unknown, ctx: HandlerContext): Promise<void> {
  await tracer.startActiveSpan('app.save-result', async (span) => {
    span.setAttribute('app.job', ctx.jobId);
    await Promise.resolve();
    span.end();
  });
}

function traced(options: Partial<ReceiverOptions> = {}) {
  return createReceiver({ publicKeys: keys.publicKeyPem, onEvent: userHandler, logger: silentLogger, tracer, ...options });
}

const toRequest = (r: ReturnType<typeof buildSignedRequest>) =>
  new Request('https://hooks.example.com/jobs', { method: 'POST', headers: r.headers, body: r.body });

describe('traces: a span per delivery, the handler under it', () => {
  it('receiver.handle: jobhook.webhook → jobhook.handler → the handler’s own span, with the attributes', async () => {
    const request = buildSignedRequest({ status: 'success' });
    const jobId = request.event.job_id;
    expect((await traced().handle(request)).status).toBe(200);

    const webhook = one(SPAN_NAMES.webhook);
    const handler = one(SPAN_NAMES.handler);
    const own = one('app.save-result');
    expect(parentOf(webhook)).toBeUndefined();
    expect(parentOf(handler)).toBe(idOf(webhook));
    expect(parentOf(own)).toBe(idOf(handler));
    expect(new Set(spans().map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(webhook.kind).toBe(SpanKind.INTERNAL);
    expect(webhook.status.code).toBe(SpanStatusCode.UNSET);
    expect(webhook.attributes).toEqual({
      'jobhook.source': 'webhook',
      'http.request.method': 'POST',
      'jobhook.outcome': 'handled',
      'http.response.status_code': 200,
      'jobhook.job.id': jobId,
      'jobhook.job.status': 'success',
      'jobhook.profile': 'python',
      'jobhook.key.id': expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(handler.attributes).toEqual({ 'jobhook.job.id': jobId });
    expect(own.attributes).toEqual({ 'app.job': jobId });
  });

  it('through an adapter (precheck, then the admission): the same tree, under the HTTP server’s span when there is one', async () => {
    const handle = createFetchHandler(traced());
    const request = buildSignedRequest({ status: 'fail' });
    // What an HTTP instrumentation does: the request runs inside its SERVER span.
    const response = await tracer.startActiveSpan('POST /jobs', { kind: SpanKind.SERVER }, async (span) => {
      try {
        return await handle(toRequest(request));
      } finally {
        span.end();
      }
    });
    expect(response.status).toBe(200);
    const server = one('POST /jobs');
    const webhook = one(SPAN_NAMES.webhook);
    expect(parentOf(webhook)).toBe(idOf(server));
    expect(parentOf(one(SPAN_NAMES.handler))).toBe(idOf(webhook));
    expect(parentOf(one('app.save-result'))).toBe(idOf(one(SPAN_NAMES.handler)));
    expect(webhook.attributes).toMatchObject({
      [SPAN_ATTRIBUTES.outcome]: 'handled',
      [SPAN_ATTRIBUTES.jobStatus]: 'fail',
      [SPAN_ATTRIBUTES.jobId]: request.event.job_id,
      [SPAN_ATTRIBUTES.httpStatus]: 200,
    });
  });

  it('a traced admission still charges its body and moves its pace deadline (the budget and the shares hold with a tracer)', () => {
    vi.useFakeTimers();
    try {
      const receiver = traced({ maxBodyBytesInFlight: 4 * 1024 * 1024 });
      const request = buildSignedRequest();
      const { admission } = receiver.precheck({ ...request, clientAddress: '203.0.113.9' });
      expect(typeof admission?.charge).toBe('function');
      expect(admission!.charge!(300 * 1024)).toBeUndefined();
      expect(receiver.stats().bodyBytesInFlight).toBe(300 * 1024);
      // 2 s of start plus 300 KiB at 16 KiB/s: still reading at 3 s.
      vi.advanceTimersByTime(3000);
      expect(admission!.signal.aborted).toBe(false);
      admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone'));
      expect(receiver.stats().bodyBytesInFlight).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a handler that throws: both spans ERROR, the exception on the handler’s, the code on the delivery’s', async () => {
    const receiver = traced({
      onEvent: async () => {
        throw new TypeError('downstream said no');
      },
    });
    expect((await receiver.handle(buildSignedRequest())).status).toBe(500);
    const webhook = one(SPAN_NAMES.webhook);
    const handler = one(SPAN_NAMES.handler);
    expect(webhook.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ERR_HANDLER_FAILED' });
    expect(webhook.attributes).toMatchObject({
      'jobhook.outcome': 'handler-failed',
      'jobhook.error.code': 'ERR_HANDLER_FAILED',
      'error.type': 'ERR_HANDLER_FAILED',
      'http.response.status_code': 500,
    });
    expect(handler.status.code).toBe(SpanStatusCode.ERROR);
    expect(handler.attributes['error.type']).toBe('TypeError');
    expect(handler.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([['exception', 'downstream said no']]);
  });

  it('refusals: a bad signature (before the body is read), a duplicate, a busy receiver: a span each, status UNSET', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const running = new Promise<void>((resolve) => (entered = resolve));
    const receiver = traced({
      maxConcurrentHandlers: 1,
      onEvent: async () => {
        entered();
        await blocked;
      },
    });
    const handle = createFetchHandler(receiver);
    const forged = buildSignedRequest({}, { privateKey: createTestKeyPair(3072).privateKey });
    expect((await handle(toRequest(forged))).status).toBe(401);
    const refused = one(SPAN_NAMES.webhook);
    expect(refused.attributes).toEqual({
      'jobhook.source': 'webhook',
      'http.request.method': 'POST',
      'jobhook.outcome': 'rejected',
      'http.response.status_code': 401,
      'jobhook.error.code': 'ERR_SIGNATURE_MALFORMED',
    });
    expect(refused.status.code).toBe(SpanStatusCode.UNSET);
    exporter.reset();

    const first = buildSignedRequest();
    const pending = handle(toRequest(first));
    await running;
    const busy = buildSignedRequest();
    expect((await handle(toRequest(busy))).status).toBe(503);
    const busySpan = one(SPAN_NAMES.webhook);
    expect(busySpan.attributes).toMatchObject({
      'jobhook.outcome': 'handlers-busy',
      'jobhook.error.code': 'ERR_HANDLERS_BUSY',
      'jobhook.job.id': busy.event.job_id,
      'http.response.status_code': 503,
    });
    expect(busySpan.status.code).toBe(SpanStatusCode.UNSET);
    release();
    expect((await pending).status).toBe(200);
    exporter.reset();

    expect((await handle(toRequest(first))).status).toBe(200);
    expect(spans().map((s) => [s.name, s.attributes['jobhook.outcome']])).toEqual([[SPAN_NAMES.webhook, 'duplicate']]);
  });

  it('a handler past handlerTimeoutMs: the delivery’s span ends with the answer (ERROR), the handler’s when it settles, under it', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let settled!: () => void;
    const done = new Promise<void>((resolve) => (settled = resolve));
    const receiver = traced({
      handlerTimeoutMs: 20,
      onEvent: async () => {
        await blocked;
        settled();
      },
    });
    expect((await receiver.handle(buildSignedRequest())).outcome.kind).toBe('handler-timeout');
    const webhook = one(SPAN_NAMES.webhook);
    expect(webhook.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ERR_HANDLER_TIMEOUT' });
    expect(named(SPAN_NAMES.handler)).toEqual([]);
    release();
    await done;
    await new Promise<void>((resolve) => setImmediate(resolve));
    const handler = one(SPAN_NAMES.handler);
    expect(parentOf(handler)).toBe(idOf(webhook));
    expect(handler.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('receiver.handlePolled: jobhook.poll with source poll, the handler’s spans under it; a store failure ERROR', async () => {
    const jobId = buildSignedRequest().event.job_id;
    const poll = { job_id: jobId.toUpperCase(), status: 'success', output: { text: 'hello' } };
    expect(await traced().handlePolled(poll)).toEqual({ kind: 'handled', jobId });
    const span = one(SPAN_NAMES.poll);
    expect(span.attributes).toEqual({
      'jobhook.source': 'poll',
      'jobhook.job.id': jobId,
      'jobhook.job.status': 'success',
      'jobhook.outcome': 'handled',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(parentOf(span)).toBeUndefined();
    expect(parentOf(one(SPAN_NAMES.handler))).toBe(idOf(span));
    expect(parentOf(one('app.save-result'))).toBe(idOf(one(SPAN_NAMES.handler)));
    exporter.reset();

    const store = createMemoryStore();
    const storeDown = traced({ store: { ...store, claim: () => Promise.reject(new Error('ECONNREFUSED')) } });
    expect((await storeDown.handlePolled({ ...poll, status: 'fail', output: undefined, error: { message: 'no' } })).kind).toBe(
      'store-unavailable',
    );
    const failed = one(SPAN_NAMES.poll);
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ERR_STORE_UNAVAILABLE' });
    expect(failed.attributes).toMatchObject({
      'jobhook.job.status': 'fail',
      'jobhook.error.code': 'ERR_STORE_UNAVAILABLE',
      'error.type': 'ERR_STORE_UNAVAILABLE',
    });
    expect(failed.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([['exception', 'ECONNREFUSED']]);
    expect(named(SPAN_NAMES.handler)).toEqual([]);
  });

  it('without a tracer: no span, even with a global tracer provider registered', async () => {
    trace.setGlobalTracerProvider(provider);
    try {
      const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger });
      expect((await receiver.handle(buildSignedRequest())).status).toBe(200);
      expect(spans()).toEqual([]);
      // The same provider does record once given: the check above can fail.
      expect((await traced({ onEvent: () => {} }).handle(buildSignedRequest())).status).toBe(200);
      expect(spans().map((s) => s.name)).toEqual([SPAN_NAMES.handler, SPAN_NAMES.webhook]);
    } finally {
      trace.disable();
    }
  });

  it('a tracer that is not one: ERR_OPTION_INVALID naming the option', () => {
    for (const bad of [{}, 'jobhook', null]) {
      expect(() => traced({ tracer: bad as unknown as Tracer })).toThrow(
        expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringContaining('tracer') }),
      );
    }
  });
});
