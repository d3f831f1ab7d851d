import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Registry } from 'prom-client';
import { createReceiver, type AsyncJobCompletedEvent, type HandlerContext, type Logger, type Receiver } from '@jobhook/core';
import { createMemoryLedger, type JobLedger, type ReconcileOutcome } from '@jobhook/core/ledger';
import { createReconcilerMetrics } from '@jobhook/core/metrics';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { createClient, createReconciler, type Client, type ReconcilerOptions, type SubmittedJob } from '../src/index.js';
import { GOOD_KEY, pollsOf, startFakeService, type FakeService } from './helpers/fake-service.js';

const keys = createTestKeyPair();
const DEADLINE_MS = 10_000;

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterAll(async () => {
  await service.close();
});

/** A logger that keeps its lines. */
function recordingLogger(): Logger & { lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const at =
    (level: string) =>
    (fields: object, msg?: string): void =>
      void lines.push({ level, msg: msg ?? '', fields: fields as Record<string, unknown> });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('createReconciler (virtual time)', () => {
  let ledger: JobLedger;
  let client: Client;
  let receiver: Receiver;
  let handled: Array<{ event: AsyncJobCompletedEvent; ctx: HandlerContext }>;
  let failHandler: number;
  let log: ReturnType<typeof recordingLogger>;
  let outcomes: ReconcileOutcome[];

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
    ledger = createMemoryLedger();
    client = createClient({
      baseUrl: 'http://fake-service.test',
      apiKey: GOOD_KEY,
      fetch: service.fetch,
      ledger,
      resultDeadlineMs: DEADLINE_MS,
    });
    handled = [];
    failHandler = 0;
    log = recordingLogger();
    outcomes = [];
    receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      logger: log,
      ledger,
      onEvent(event, ctx) {
        if (failHandler > 0) {
          failHandler--;
          throw new Error('handler down');
        }
        handled.push({ event, ctx });
      },
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const reconcilerWith = (options: Partial<ReconcilerOptions> = {}) =>
    createReconciler({
      client,
      ledger,
      receiver,
      logger: log,
      intervalMs: 1_000,
      pollBackoffMs: 5_000,
      onOutcome: (o) => void outcomes.push(o),
      ...options,
    });
  const submit = (simulate: Record<string, unknown> = {}): Promise<SubmittedJob> =>
    client.submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'f', simulate }, webhook_receiver: 'https://me.example/hooks' });

  it('polls a job whose webhook never came once its deadline passed, and hands it to the handlers once', async () => {
    const reconciler = reconcilerWith();
    const { job_id } = await submit({ delay_ms: 1_000 });
    expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
    reconciler.start();
    await vi.advanceTimersByTimeAsync(DEADLINE_MS - 1_000);
    expect(pollsOf(service, job_id)).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(2_000);
    await reconciler.stop();
    expect(pollsOf(service, job_id)).toHaveLength(1);
    expect(handled).toHaveLength(1);
    expect(handled[0]?.ctx.source).toBe('poll');
    expect(handled[0]?.event).toMatchObject({ job_id, status: 'success', output: { text: 'hello' } });
    expect(outcomes).toEqual([{ kind: 'reconciled', key: expect.any(String), jobId: job_id }]);
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
  });

  it('never polls a job whose webhook was handled before its deadline', async () => {
    const reconciler = reconcilerWith();
    const { job_id } = await submit();
    expect((await receiver.handle(buildSignedRequest({ job_id, status: 'success' }))).status).toBe(200);
    reconciler.start();
    await vi.advanceTimersByTimeAsync(3 * DEADLINE_MS);
    await reconciler.stop();
    expect(pollsOf(service, job_id)).toHaveLength(0);
    expect(handled.map((h) => h.ctx.source)).toEqual(['webhook']);
  });

  it('a webhook that beats the ledger write is handled; the entry written after it costs one poll, found done', async () => {
    const reconciler = reconcilerWith();
    // The service answered, the webhook arrived and was handled, then the job id reached the ledger.
    const { job_id } = await client.submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'f' } });
    expect((await receiver.handle(buildSignedRequest({ job_id, status: 'success' }))).status).toBe(200);
    await ledger.begin('late-key', { dueAt: Date.now() + DEADLINE_MS });
    await ledger.attach('late-key', job_id);
    expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
    reconciler.start();
    await vi.advanceTimersByTimeAsync(DEADLINE_MS + 1_000);
    await reconciler.stop();
    expect(outcomes.map((o) => o.kind)).toEqual(['already-handled']);
    expect(handled).toHaveLength(1);
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
  });

  it('polls an unfinished job again with doubling backoff, and abandons it past the horizon', async () => {
    const reconciler = reconcilerWith({ horizonMs: 60_000 });
    const { job_id } = await submit({ delay_ms: -1 });
    reconciler.start();
    await vi.advanceTimersByTimeAsync(120_000);
    await reconciler.stop();
    const at = pollsOf(service, job_id).map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    // Backoff 5 s, 10 s, 20 s (rounded up to the next round of the 1 s loop).
    expect(gaps.map((g) => Math.round(g / 1_000))).toEqual([5, 10, 20, 40].slice(0, gaps.length));
    expect(outcomes.at(-1)).toEqual({ kind: 'abandoned', key: expect.any(String), jobId: job_id, reason: 'horizon' });
    expect(log.lines.some((l) => l.level === 'warn' && /abandoned: job .* is still processing/.test(l.msg))).toBe(true);
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
    expect(handled).toHaveLength(0);
  });

  it('abandons a job the service answers 404 for, with a warning', async () => {
    const reconciler = reconcilerWith();
    await ledger.begin('k-404', { dueAt: Date.now() });
    await ledger.attach('k-404', '00000000-0000-4000-8000-000000000404');
    const summary = await reconciler.runOnce();
    expect(summary.outcomes).toEqual({ abandoned: 1 });
    expect(outcomes[0]).toMatchObject({ kind: 'abandoned', reason: 'not-found' });
    expect(log.lines.some((l) => l.level === 'warn' && /404/.test(l.msg))).toBe(true);
  });

  it('a 429 pauses every poll for its Retry-After', async () => {
    const reconciler = reconcilerWith({ maxPollsPerSecond: 100 });
    const jobs = [await submit(), await submit(), await submit()];
    await vi.advanceTimersByTimeAsync(DEADLINE_MS);
    service.faults.push({ status: 429, headers: { 'retry-after': '7' } });
    const started = performance.now();
    reconciler.start();
    await vi.advanceTimersByTimeAsync(20_000);
    await reconciler.stop();
    const polls = jobs
      .flatMap((j) => pollsOf(service, j.job_id))
      .map((r) => r.at - started)
      .sort((a, b) => a - b);
    // The first poll was refused; the next ones wait out the 7 s.
    expect(polls[0]).toBeLessThan(1_000);
    expect(polls.slice(1).every((t) => t >= 7_000)).toBe(true);
    // The refused poll's entry, and the round's others (given back rather than held through the pause).
    expect(outcomes.filter((o) => o.kind === 'reconciled')).toHaveLength(3);
    expect(outcomes.filter((o) => o.kind !== 'reconciled').map((o) => o.kind)).toEqual(expect.arrayContaining(['rate-limited']));
    expect(outcomes.filter((o) => o.kind !== 'reconciled' && o.kind !== 'rate-limited')).toEqual([]);
    expect(handled).toHaveLength(3);
  });

  it('a long Retry-After gives the round’s entries back, due after it, rather than holding their leases', async () => {
    const reconciler = reconcilerWith({ maxPollsPerSecond: 100, concurrency: 1 });
    await Promise.all([submit(), submit(), submit()]);
    await vi.advanceTimersByTimeAsync(DEADLINE_MS);
    service.faults.push({ status: 429, headers: { 'retry-after': '3600' } });
    const running = reconciler.runOnce();
    await vi.advanceTimersByTimeAsync(100);
    expect((await running).outcomes).toEqual({ 'rate-limited': 3 });
    expect(await ledger.lease({ limit: 10, leaseMs: 1_000 })).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(await ledger.lease({ limit: 10, leaseMs: 1_000 })).toHaveLength(3);
  });

  it('keeps to maxPollsPerSecond', async () => {
    const reconciler = reconcilerWith({ maxPollsPerSecond: 2, concurrency: 4 });
    const jobs = await Promise.all(Array.from({ length: 6 }, () => submit()));
    await vi.advanceTimersByTimeAsync(DEADLINE_MS);
    const { leased } = await (async () => {
      const running = reconciler.runOnce();
      await vi.advanceTimersByTimeAsync(5_000);
      return running;
    })();
    expect(leased).toBe(6);
    const at = jobs.map((j) => pollsOf(service, j.job_id)[0]?.at as number).sort((a, b) => a - b);
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    expect(gaps.every((g) => g >= 500)).toBe(true);
  });

  it('a failing handler is retried on the backoff, then handled once', async () => {
    const reconciler = reconcilerWith();
    failHandler = 1;
    const { job_id } = await submit();
    reconciler.start();
    await vi.advanceTimersByTimeAsync(DEADLINE_MS + 10_000);
    await reconciler.stop();
    expect(outcomes.map((o) => o.kind)).toEqual(['handler-failed', 'reconciled']);
    expect(handled.map((h) => h.event.job_id)).toEqual([job_id]);
    expect(log.lines.some((l) => l.level === 'error' && /not handled \(handler-failed\)/.test(l.msg))).toBe(true);
  });

  it('a receiver with every handler slot taken: the poll claims nothing, is looked at again after the backoff, then handled', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let entered!: () => void;
    const blocked = new Promise<void>((resolve) => (entered = resolve));
    const blocker = buildSignedRequest({}, { privateKey: keys.privateKey });
    receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      logger: log,
      ledger,
      maxConcurrentHandlers: 1,
      async onEvent(event, ctx) {
        if (event.job_id === blocker.event.job_id) {
          entered();
          await gate;
        }
        handled.push({ event, ctx });
      },
    });
    const webhook = receiver.handle(blocker);
    await blocked;
    const reconciler = reconcilerWith();
    const { job_id } = await submit();
    reconciler.start();
    await vi.advanceTimersByTimeAsync(DEADLINE_MS + 1_000);
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'handler-failed', jobId: job_id, code: 'ERR_HANDLERS_BUSY' })]);
    expect(log.lines.some((l) => l.level === 'warn' && /handler slot/.test(l.msg))).toBe(true);
    open();
    expect((await webhook).status).toBe(200);
    await vi.advanceTimersByTimeAsync(10_000);
    await reconciler.stop();
    expect(outcomes.map((o) => o.kind)).toEqual(['handler-failed', 'reconciled']);
    expect(handled.map((h) => h.event.job_id)).toEqual([blocker.event.job_id, job_id]);
  });

  it('an entry that never got a job id waits for the grace period, then is abandoned with a log line', async () => {
    const reconciler = reconcilerWith({ unattachedGraceMs: 60_000 });
    await ledger.begin('crashed-submit', { dueAt: Date.now() + DEADLINE_MS });
    reconciler.start();
    await vi.advanceTimersByTimeAsync(DEADLINE_MS + 1_000);
    expect(outcomes.map((o) => o.kind)).toEqual(['waiting-for-job-id']);
    await vi.advanceTimersByTimeAsync(60_000);
    await reconciler.stop();
    expect(outcomes.map((o) => o.kind)).toEqual(['waiting-for-job-id', 'abandoned']);
    expect(outcomes[1]).toMatchObject({ key: 'crashed-submit', jobId: null, reason: 'no-job-id' });
    expect(log.lines.some((l) => l.level === 'warn' && /submission crashed-submit got no job id/.test(l.msg))).toBe(true);
  });

  it('two reconcilers on one ledger poll each job once', async () => {
    const one = reconcilerWith();
    const two = reconcilerWith();
    const jobs = await Promise.all(Array.from({ length: 8 }, () => submit()));
    await vi.advanceTimersByTimeAsync(DEADLINE_MS);
    const both = Promise.all([one.runOnce(), two.runOnce()]);
    await vi.advanceTimersByTimeAsync(10_000);
    const [a, b] = await both;
    expect(a.leased + b.leased).toBe(8);
    for (const job of jobs) expect(pollsOf(service, job.job_id)).toHaveLength(1);
    expect(handled).toHaveLength(8);
  });

  it('feeds the metrics: outstanding, reconciled, abandoned', async () => {
    const registry = new Registry();
    const reconciler = reconcilerWith({ metrics: createReconcilerMetrics({ registry }) });
    await submit();
    await submit({ delay_ms: -1 });
    await ledger.begin('k-404', { dueAt: Date.now() });
    await ledger.attach('k-404', '00000000-0000-4000-8000-000000000404');
    await vi.advanceTimersByTimeAsync(DEADLINE_MS);
    const running = reconciler.runOnce();
    await vi.advanceTimersByTimeAsync(5_000);
    await running;
    const text = await registry.metrics();
    expect(text).toContain('jobhook_jobs_reconciled_total 1');
    expect(text).toContain('jobhook_jobs_abandoned_total{reason="not-found"} 1');
    expect(text).toContain('jobhook_reconciler_polls_total{outcome="pending"} 1');
    expect(text).toContain('jobhook_jobs_outstanding{state="attached"} 1');
    expect(text).toContain('jobhook_jobs_outstanding{state="unattached"} 0');
  });
});

describe('submitJob with a ledger', () => {
  it('discards the entry when the service refuses the submission (no job was made)', async () => {
    const ledger = createMemoryLedger();
    const refused = createClient({ baseUrl: service.url, apiKey: 'wrong-key', ledger });
    await expect(refused.submitJob({ model: 'm/s/p', input: {}, webhook_receiver: 'https://me.example/h' })).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
    });
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
  });

  it('keeps an entry without a job id when the answer is lost (the job may exist)', async () => {
    const ledger = createMemoryLedger();
    const client = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, ledger });
    service.faults.push('destroy');
    await expect(client.submitJob({ model: 'm/s/p', input: {}, webhook_receiver: 'https://me.example/h' })).rejects.toMatchObject({
      code: 'ERR_NETWORK',
    });
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 1 });
  });

  it('writes the entry before the request, under the given submission key', async () => {
    const ledger = createMemoryLedger();
    let seenBefore: unknown;
    const client = createClient({
      baseUrl: service.url,
      apiKey: GOOD_KEY,
      ledger,
      fetch: async (input, init) => {
        seenBefore = await ledger.count();
        return fetch(input, init);
      },
    });
    const { job_id } = await client.submitJob(
      { model: 'm/s/p', input: {}, webhook_receiver: 'https://me.example/h' },
      { submissionKey: 'my-nonce' },
    );
    expect(seenBefore).toEqual({ attached: 0, unattached: 1 });
    expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
    // Settled by job id; the entry was the one of the given key (discarding it now finds nothing).
    expect(await ledger.settle(job_id)).toBe(true);
    await ledger.attach('my-nonce', job_id);
    expect(await ledger.discard('my-nonce')).toBe(true);
  });

  it('with recipientSecret, the entry is keyed by the recipient tag’s nonce', async () => {
    const ledger = createMemoryLedger();
    const client = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, ledger, recipientSecret: 'a-recipient-secret-of-32-bytes!!' });
    const { job_id } = await client.submitJob({ model: 'm/s/p', input: {}, webhook_receiver: 'https://me.example/h' });
    const sent = JSON.parse(service.requests.filter((r) => r.method === 'POST').at(-1)?.body ?? '{}') as {
      user_webhook_parameters?: { jobhook_recipient?: string };
    };
    // v1.<issued at>.<nonce>.<url hash>.<mac>
    const nonce = sent.user_webhook_parameters?.jobhook_recipient?.split('.')[2];
    expect(nonce).toMatch(/^[\w-]{16,}$/);
    await ledger.attach(nonce as string, job_id, { dueAt: 0 });
    const [entry] = await ledger.lease({ limit: 1, leaseMs: 1_000 });
    expect(entry).toMatchObject({ key: nonce, jobId: job_id });
    expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
  });

  it('a job without a webhook_receiver is not expected back: no entry', async () => {
    const ledger = createMemoryLedger();
    const client = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, ledger });
    await client.submitJob({ model: 'm/s/p', input: {} });
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
  });

  it('refuses a ledger that is not one, and a bad resultDeadlineMs', () => {
    expect(() => createClient({ baseUrl: service.url, apiKey: GOOD_KEY, ledger: {} as never })).toThrow(/ledger must be a JobLedger/);
    expect(() => createClient({ baseUrl: service.url, apiKey: GOOD_KEY, resultDeadlineMs: 0 })).toThrow(/resultDeadlineMs/);
  });
});
