/**
 * maxConcurrentHandlers: handlers that wait on a promise the test releases hold the receiver's
 * slots for real; a delivery past the bound is answered 503 ERR_HANDLERS_BUSY + Retry-After at
 * once, before its claim (no lease, no transaction), and every slot comes back whatever the
 * handler's end: success, throw, a duplicate, a store failure, and a timeout once the handler
 * finally settles. Polled results (receiver.handlePolled) share the same slots.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  createJsonLogger,
  createMemoryStore,
  createReceiver,
  createFetchHandler,
  JobhookError,
  silentLogger,
  type IdempotencyStore,
  type ReceiverOptions,
  type ReceiverOutcome,
  type TransactionalStore,
  type TransactionResult,
} from '../../src/index.js';
import { createReceiverMetrics } from '../../src/metrics/receiver-metrics.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';
import { sampleSum } from '../helpers/prometheus-text.js';

const keys = createTestKeyPair();
const json = (body: string) => JSON.parse(body) as { error?: { code: string } };

/** A promise the test settles, and one that says when the handler reached it. */
function gate() {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const opened = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { opened, open, fail };
}

/** Every job's handler blocks on its own gate until the test opens it; `entered` resolves once it runs. */
function blockingHandlers() {
  const gates = new Map<string, ReturnType<typeof gate>>();
  const arrivals = new Map<string, ReturnType<typeof gate>>();
  let running = 0;
  let peak = 0;
  const of = <T>(map: Map<string, T>, jobId: string, make: () => T): T => {
    let value = map.get(jobId);
    if (value === undefined) map.set(jobId, (value = make()));
    return value;
  };
  const onEvent = async (_event: unknown, { jobId }: { jobId: string }): Promise<void> => {
    running++;
    peak = Math.max(peak, running);
    of(arrivals, jobId, gate).open();
    try {
      await of(gates, jobId, gate).opened;
    } finally {
      running--;
    }
  };
  return {
    onEvent,
    entered: (jobId: string) => of(arrivals, jobId, gate).opened,
    release: (jobId: string) => of(gates, jobId, gate).open(),
    reject: (jobId: string, error: Error) => of(gates, jobId, gate).fail(error),
    peak: () => peak,
  };
}

/** Runs every callback queued so far and the microtasks they queue: a settled handler's slot is back by then. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

function receiverWith(options: Partial<ReceiverOptions> & Pick<ReceiverOptions, 'onEvent'>) {
  const outcomes: ReceiverOutcome[] = [];
  const receiver = createReceiver({
    publicKeys: keys.publicKeyPem,
    logger: silentLogger,
    onOutcome: (outcome) => outcomes.push(outcome),
    ...options,
  });
  return { receiver, outcomes };
}

describe('maxConcurrentHandlers: a bound on handlers running at once', () => {
  it('past the bound: 503 ERR_HANDLERS_BUSY + Retry-After at once, the handler not run, no lease left on the job', async () => {
    const handlers = blockingHandlers();
    const store = createMemoryStore();
    const { receiver } = receiverWith({ onEvent: handlers.onEvent, store, maxConcurrentHandlers: 2, retryAfterSeconds: 7 });
    const [a, b, c] = [buildSignedRequest(), buildSignedRequest(), buildSignedRequest()];
    const first = receiver.handle(a);
    const second = receiver.handle(b);
    await Promise.all([handlers.entered(a.event.job_id), handlers.entered(b.event.job_id)]);

    const refused = await receiver.handle(c);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('7');
    expect(json(refused.body).error?.code).toBe('ERR_HANDLERS_BUSY');
    expect(refused.outcome).toMatchObject({
      kind: 'handlers-busy',
      code: 'ERR_HANDLERS_BUSY',
      jobId: c.event.job_id,
      eventStatus: 'success',
    });
    // Counted before the claim: the refused job is free for its retry, here or on another instance.
    const claim = await store.claim(c.event.job_id, { leaseMs: 1000 });
    expect(claim.state).toBe('claimed');
    if (claim.state === 'claimed') await store.release(c.event.job_id, claim.token);
    expect(receiver.stats()).toMatchObject({ handlersBusy: 1, handlersRunning: 2, handled: 0, rejected: {} });

    handlers.release(a.event.job_id);
    handlers.release(b.event.job_id);
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(receiver.stats().handlersRunning).toBe(0);
    // The sender's retry now finds a slot.
    const retried = receiver.handle(c);
    await handlers.entered(c.event.job_id);
    handlers.release(c.event.job_id);
    expect((await retried).outcome.kind).toBe('handled');
    expect(handlers.peak()).toBe(2);
  });

  it('many deliveries at once: never more handlers than the bound, each refused one answered 503, none queued', async () => {
    const handlers = blockingHandlers();
    const { receiver } = receiverWith({ onEvent: handlers.onEvent, maxConcurrentHandlers: 3 });
    const requests = Array.from({ length: 12 }, () => buildSignedRequest());
    const answers = requests.map((request) => receiver.handle(request));
    // The refused ones answer while the first three still hold their slots.
    const first = requests.slice(0, 3);
    await Promise.all(first.map((r) => handlers.entered(r.event.job_id)));
    const refused = await Promise.all(answers.slice(3));
    expect(refused.map((r) => [r.status, r.outcome.code])).toEqual(Array(9).fill([503, 'ERR_HANDLERS_BUSY']));
    for (const r of first) handlers.release(r.event.job_id);
    expect((await Promise.all(answers.slice(0, 3))).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(handlers.peak()).toBe(3);
    expect(receiver.stats()).toMatchObject({ handled: 3, handlersBusy: 9, handlersRunning: 0 });
  });

  it('a slot comes back when the handler throws, and for a duplicate', async () => {
    const handlers = blockingHandlers();
    const { receiver } = receiverWith({ onEvent: handlers.onEvent, maxConcurrentHandlers: 1 });
    const a = buildSignedRequest();
    const failing = receiver.handle(a);
    await handlers.entered(a.event.job_id);
    handlers.reject(a.event.job_id, new Error('downstream said no'));
    expect((await failing).outcome.kind).toBe('handler-failed');
    expect(receiver.stats().handlersRunning).toBe(0);

    const b = buildSignedRequest();
    const ok = receiver.handle(b);
    await handlers.entered(b.event.job_id);
    handlers.release(b.event.job_id);
    expect((await ok).status).toBe(200);
    expect((await receiver.handle(b)).outcome.kind).toBe('duplicate');
    expect(receiver.stats().handlersRunning).toBe(0);
  });

  it('a slot comes back when the store fails', async () => {
    let down = true;
    const base = createMemoryStore();
    const store: IdempotencyStore = {
      claim: (id, o) => (down ? Promise.reject(new Error('ECONNREFUSED')) : base.claim(id, o)),
      complete: (id, t, o) => base.complete(id, t, o),
      release: (id, t) => base.release(id, t),
      extend: (id, t, o) => base.extend(id, t, o),
      close: () => base.close(),
    };
    const { receiver } = receiverWith({ onEvent: () => {}, store, maxConcurrentHandlers: 1 });
    expect((await receiver.handle(buildSignedRequest())).outcome.kind).toBe('store-unavailable');
    expect((await receiver.handle(buildSignedRequest())).outcome.kind).toBe('store-unavailable');
    expect(receiver.stats()).toMatchObject({ handlersRunning: 0, handlersBusy: 0 });
    down = false;
    expect((await receiver.handle(buildSignedRequest())).outcome.kind).toBe('handled');
  });

  it('a handler past handlerTimeoutMs keeps its slot until it settles (it still runs), then gives it back', async () => {
    const handlers = blockingHandlers();
    const { receiver } = receiverWith({ onEvent: handlers.onEvent, maxConcurrentHandlers: 1, handlerTimeoutMs: 20 });
    const slow = buildSignedRequest();
    const answered = await receiver.handle(slow);
    expect(answered.outcome.kind).toBe('handler-timeout');
    expect(receiver.stats().handlersRunning).toBe(1);
    const refused = await receiver.handle(buildSignedRequest());
    expect(refused.outcome).toMatchObject({ kind: 'handlers-busy', status: 503 });

    handlers.release(slow.event.job_id);
    await settled();
    expect(receiver.stats().handlersRunning).toBe(0);
    const next = buildSignedRequest();
    const answer = receiver.handle(next);
    await handlers.entered(next.event.job_id);
    handlers.release(next.event.job_id);
    expect((await answer).outcome.kind).toBe('handled');
  });

  it('with a transactional store: a refused delivery opens no transaction', async () => {
    const handlers = blockingHandlers();
    let transactions = 0;
    const unsupported = (): never => {
      throw new Error('driven through runInTransaction');
    };
    const store: TransactionalStore<{ tx: true }> = {
      claim: async () => unsupported(),
      complete: async () => unsupported(),
      release: async () => unsupported(),
      extend: async () => unsupported(),
      close: async () => undefined,
      async runInTransaction(_jobId, _options, work): Promise<TransactionResult> {
        transactions++;
        try {
          await work({ tx: true });
        } catch (error) {
          return { state: 'rolled-back', error };
        }
        return { state: 'committed' };
      },
    };
    const { receiver } = receiverWith({ onEvent: handlers.onEvent, store, maxConcurrentHandlers: 1 });
    const a = buildSignedRequest();
    const first = receiver.handle(a);
    await handlers.entered(a.event.job_id);
    const refused = await receiver.handle(buildSignedRequest());
    expect([refused.status, refused.outcome.code]).toEqual([503, 'ERR_HANDLERS_BUSY']);
    expect(transactions).toBe(1);
    handlers.release(a.event.job_id);
    expect((await first).status).toBe(200);
    expect(receiver.stats().handlersRunning).toBe(0);
  });

  it('polled results share the slots: a busy poll claims nothing and is told handlers-busy; a poll holding a slot makes a webhook wait', async () => {
    const handlers = blockingHandlers();
    const store = createMemoryStore();
    const { receiver } = receiverWith({ onEvent: handlers.onEvent, store, maxConcurrentHandlers: 1 });
    const webhook = buildSignedRequest();
    const first = receiver.handle(webhook);
    await handlers.entered(webhook.event.job_id);
    const polledId = buildSignedRequest().event.job_id;
    const poll = { job_id: polledId, status: 'success', output: { text: 'hello' } };
    expect(await receiver.handlePolled(poll)).toEqual({ kind: 'handlers-busy', jobId: polledId });
    const claim = await store.claim(polledId, { leaseMs: 1000 });
    expect(claim.state).toBe('claimed');
    if (claim.state === 'claimed') await store.release(polledId, claim.token);
    handlers.release(webhook.event.job_id);
    expect((await first).status).toBe(200);

    const polled = receiver.handlePolled(poll);
    await handlers.entered(polledId);
    const refused = await receiver.handle(buildSignedRequest());
    expect([refused.status, refused.outcome.kind]).toEqual([503, 'handlers-busy']);
    handlers.release(polledId);
    expect(await polled).toEqual({ kind: 'handled', jobId: polledId });
    expect(receiver.stats()).toMatchObject({ handlersRunning: 0, handlersBusy: 1 });
  });

  it('through an adapter: the answer on the wire is 503 with Retry-After', async () => {
    const handlers = blockingHandlers();
    const { receiver } = receiverWith({ onEvent: handlers.onEvent, maxConcurrentHandlers: 1 });
    const handler = createFetchHandler(receiver);
    const toRequest = (r: ReturnType<typeof buildSignedRequest>) =>
      new Request('https://hooks.example.com/jobs', { method: 'POST', headers: r.headers, body: r.body });
    const a = buildSignedRequest();
    const first = handler(toRequest(a));
    await handlers.entered(a.event.job_id);
    const refused = await handler(toRequest(buildSignedRequest()));
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '30']);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('ERR_HANDLERS_BUSY');
    handlers.release(a.event.job_id);
    expect((await first).status).toBe(200);
  });

  it('refusals are counted by the metrics under their own outcome and code, and logged at warn at most once a minute', async () => {
    const handlers = blockingHandlers();
    const registry = new Registry();
    const metrics = createReceiverMetrics({ registry });
    const lines: Array<Record<string, unknown>> = [];
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      onEvent: handlers.onEvent,
      maxConcurrentHandlers: 1,
      onOutcome: metrics.observe,
      logger: createJsonLogger({ write: (line) => void lines.push(JSON.parse(line)) }),
    });
    const a = buildSignedRequest();
    const first = receiver.handle(a);
    await handlers.entered(a.event.job_id);
    await receiver.handle(buildSignedRequest());
    await receiver.handle(buildSignedRequest());
    handlers.release(a.event.job_id);
    await first;
    const text = await registry.metrics();
    expect(sampleSum(text, 'jobhook_webhooks_total', { outcome: 'handlers-busy', status: '503', code: 'ERR_HANDLERS_BUSY' })).toBe(2);
    expect(sampleSum(text, 'jobhook_webhooks_total', { outcome: 'handled' })).toBe(1);
    // No job id in a label: the series stay bounded whatever the traffic.
    expect(text).not.toContain(a.event.job_id);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        kind: 'handlers-busy',
        code: 'ERR_HANDLERS_BUSY',
        msg: expect.stringContaining('ERR_HANDLERS_BUSY'),
      }),
    ]);
  });

  it('refuses a bound that is not a positive integer: ERR_OPTION_INVALID naming the option', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '4']) {
      expect(() => createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, maxConcurrentHandlers: bad as number })).toThrow(
        expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringContaining('maxConcurrentHandlers') }),
      );
    }
    expect(new JobhookError('ERR_HANDLERS_BUSY', 'x').status).toBe(503);
  });
});
