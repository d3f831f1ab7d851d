/**
 * What a poll answer vouches for, through both poll paths (the result waiter over real HTTP, the
 * reconciler on virtual time): only the job asked for is handed to a handler, compared in lower
 * case as the receiver keys jobs, and named once; an answer over `maxAnswerBytes` is not read
 * further; the recipient tag the service echoes never reaches a handler. The forged answers are
 * what a service (or anything between it and you) could send: another job's result, the asked
 * job's id in upper case, `job_id` twice.
 */
import { randomUUID } from 'node:crypto';
import { createMemoryStore, createReceiver, silentLogger, type AsyncJobCompletedEvent, type Logger, type Receiver } from '@jobhook/core';
import { createMemoryLedger, type JobLedger, type ReconcileOutcome } from '@jobhook/core/ledger';
import { createReconcilerMetrics } from '@jobhook/core/metrics';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  RECIPIENT_TAG_KEY,
  createClient,
  createReconciler,
  createRecipientTag,
  createResultWaiter,
  ServiceApiError,
  type Client,
  type JobResult,
  type ResultWaiter,
} from '../src/index.js';
import { GOOD_KEY, startFakeService, type FakeService } from './helpers/fake-service.js';

const keys = createTestKeyPair();
const TAG = createRecipientTag({ secret: 'a-receiver-secret-0123456789abcdef', webhookReceiver: 'https://me.example/hooks' }).value;

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterAll(() => service.close());
afterEach(() => {
  service.faults.length = 0;
});

/** A 200 poll answer, as the body text the service would send. */
const answer = (text: string) => ({ status: 200, body: text });
const finished = (jobId: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ job_id: jobId, status: 'success', output: { text: 'forged' }, ...extra });
/** `job_id` twice: JavaScript and Python read the last (`lastId`), other parsers the first. */
const twoIds = (firstId: string, lastId: string): string =>
  `{"job_id":"${firstId}","status":"success","output":{"text":"forged"},"job_id":"${lastId}"}`;

async function rejection(promise: Promise<unknown>): Promise<ServiceApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceApiError);
  return err as ServiceApiError;
}

/** A logger that keeps its lines. */
function recordingLogger(): Logger & { lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const at =
    (level: string) =>
    (fields: object, msg?: string): void =>
      void lines.push({ level, msg: msg ?? '', fields: fields as Record<string, unknown> });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('result waiter: poll answers', () => {
  let client: Client;
  let waiter: ResultWaiter;
  let receiver: Receiver;
  let results: JobResult[];
  let log: ReturnType<typeof recordingLogger>;

  const wire = (clientOptions: { maxAnswerBytes?: number } = {}): void => {
    client = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, ...clientOptions });
    results = [];
    log = recordingLogger();
    waiter = createResultWaiter({
      client,
      logger: log,
      store: createMemoryStore(),
      pollIntervalMs: 10,
      timeoutMs: 5_000,
      onResult: (result) => void results.push(result),
    });
    receiver = createReceiver({ publicKeys: keys.publicKeyPem, logger: silentLogger, store: waiter.store, onEvent: waiter.handleEvent });
  };
  beforeEach(() => wire());
  afterEach(async () => {
    await waiter.close();
    await waiter.store.close();
  });

  const submit = async (output: unknown = { text: 'hello' }): Promise<string> =>
    (await client.submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'f', simulate: { output } } })).job_id;
  /** The job's genuine signed webhook, through the receiver that shares the waiter's store. */
  const webhook = async (jobId: string): Promise<string> =>
    (await receiver.handle(buildSignedRequest({ job_id: jobId, status: 'success', output: { text: 'real' } }))).outcome.kind;

  it("refuses another job's answer: no onResult, nothing marked done, that job's webhook still handled", async () => {
    const asked = await submit();
    const other = await submit();
    service.faults.push(answer(finished(other)));
    const err = await rejection(waiter.waitForResult(asked));
    expect([err.code, err.retryable]).toEqual(['ERR_POLL_ANSWER_MISMATCH', false]);
    expect(err.message).toContain(other);
    expect(results).toEqual([]);
    expect(log.lines).toMatchObject([{ level: 'error', fields: { jobId: asked, code: 'ERR_POLL_ANSWER_MISMATCH' } }]);
    expect(await webhook(other)).toBe('handled');
    expect(await webhook(asked)).toBe('handled');
    expect(results.map((r) => [r.jobId, r.source])).toEqual([
      [other, 'webhook'],
      [asked, 'webhook'],
    ]);
  });

  it('takes the asked job in upper case as the same job: one claim, onResult once, its webhook a duplicate', async () => {
    const asked = await submit();
    service.faults.push(answer(finished(asked.toUpperCase())));
    const result = await waiter.waitForResult(asked);
    expect(result).toMatchObject({ jobId: asked, source: 'poll', output: { text: 'forged' } });
    expect(await webhook(asked)).toBe('duplicate');
    expect(results).toHaveLength(1);
    // asked in upper case, the webhook in lower case: one job still
    const second = await submit();
    const upper = waiter.waitForResult(second.toUpperCase(), { webhookGraceMs: 2_000 });
    expect(await webhook(second)).toBe('handled');
    expect(await upper).toMatchObject({ jobId: second, source: 'webhook' });
    expect(results).toHaveLength(2);
  });

  it('refuses an answer with two job_id keys, even when the last names the job asked for', async () => {
    const asked = await submit();
    const other = await submit();
    service.faults.push(answer(twoIds(other, asked)));
    const err = await rejection(waiter.waitForResult(asked));
    expect(err.code).toBe('ERR_POLL_ANSWER_MISMATCH');
    expect(err.message).toContain('duplicate job_id keys');
    expect(results).toEqual([]);
    expect(await webhook(other)).toBe('handled');
    expect(await webhook(asked)).toBe('handled');
  });

  it("checks the answer itself when the client is one of your own that does not: another job's answer is refused", async () => {
    const asked = randomUUID();
    const other = randomUUID();
    const own = { ...client, pollJob: async () => JSON.parse(finished(other)) } as Client;
    const ownWaiter = createResultWaiter({ client: own, store: waiter.store, logger: log, onResult: (r) => void results.push(r) });
    try {
      expect((await rejection(ownWaiter.waitForResult(asked))).code).toBe('ERR_POLL_ANSWER_MISMATCH');
      expect(results).toEqual([]);
      expect(await webhook(other)).toBe('handled');
    } finally {
      await ownWaiter.close();
    }
  });

  it('rejects an answer over maxAnswerBytes with ERR_ANSWER_TOO_LARGE; nothing handled; the webhook still is', async () => {
    await waiter.close();
    wire({ maxAnswerBytes: 512 });
    const jobId = await submit({ text: 'x'.repeat(600) });
    const err = await rejection(waiter.waitForResult(jobId));
    expect([err.code, err.retryable]).toEqual(['ERR_ANSWER_TOO_LARGE', false]);
    expect(err.message).toContain(jobId);
    expect(results).toEqual([]);
    expect(log.lines).toMatchObject([{ level: 'warn', fields: { jobId, code: 'ERR_ANSWER_TOO_LARGE' } }]);
    expect(log.lines[0]?.msg).toContain(`GET /v3/universal-ai/async/${jobId}`);
    expect(await webhook(jobId)).toBe('handled');
  });

  it('refuses a logger without the four methods at construction: ERR_OPTION_INVALID naming logger', () => {
    expect(() => createResultWaiter({ client, logger: { warn() {} } as never })).toThrow(/logger/);
  });

  it('drops the recipient tag from user_parameters in JobResult.data, as the webhook path does', async () => {
    const jobId = await submit();
    service.faults.push(answer(finished(jobId, { user_parameters: { order: 7, [RECIPIENT_TAG_KEY]: TAG } })));
    const result = await waiter.waitForResult(jobId);
    expect(result.data.user_parameters).toEqual({ order: 7 });
    expect(JSON.stringify(results)).not.toContain(TAG);
    const alone = await submit();
    service.faults.push(answer(finished(alone, { user_parameters: { [RECIPIENT_TAG_KEY]: TAG } })));
    const bare = await waiter.waitForResult(alone);
    expect('user_parameters' in bare.data).toBe(false);
  });
});

describe('reconciler: poll answers (virtual time)', () => {
  const DEADLINE_MS = 10_000;
  let ledger: JobLedger;
  let client: Client;
  let receiver: Receiver;
  let handled: AsyncJobCompletedEvent[];
  let log: ReturnType<typeof recordingLogger>;
  let outcomes: ReconcileOutcome[];
  let registry: Registry;

  const wire = (clientOptions: { maxAnswerBytes?: number } = {}): void => {
    client = createClient({
      baseUrl: 'http://fake-service.test',
      apiKey: GOOD_KEY,
      fetch: service.fetch,
      ledger,
      resultDeadlineMs: DEADLINE_MS,
      ...clientOptions,
    });
  };
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
    ledger = createMemoryLedger();
    wire();
    handled = [];
    log = recordingLogger();
    outcomes = [];
    registry = new Registry();
    receiver = createReceiver({ publicKeys: keys.publicKeyPem, logger: log, ledger, onEvent: (event) => void handled.push(event) });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const submit = async (output: unknown = { text: 'hello' }): Promise<string> =>
    (
      await client.submitJob({
        model: 'ocr/ocr_async/amazon',
        input: { file: 'f', simulate: { output } },
        webhook_receiver: 'https://me.example/hooks',
      })
    ).job_id;
  /** One reconciler round once the job is due. */
  const round = async (): Promise<void> => {
    const reconciler = createReconciler({
      client,
      ledger,
      receiver,
      logger: log,
      metrics: createReconcilerMetrics({ registry }),
      onOutcome: (o) => void outcomes.push(o),
    });
    vi.setSystemTime(Date.now() + DEADLINE_MS + 1);
    const done = reconciler.runOnce();
    // The reconciler's rate limit spaces its polls (5 a second by default).
    await vi.advanceTimersByTimeAsync(5_000);
    await done;
  };
  const webhook = async (jobId: string): Promise<string> =>
    (await receiver.handle(buildSignedRequest({ job_id: jobId, status: 'success' }))).outcome.kind;

  it("refuses another job's answer: poll-failed ERR_POLL_ANSWER_MISMATCH, logged, nothing handled or settled", async () => {
    const asked = await submit();
    const other = randomUUID();
    service.faults.push(answer(finished(other)));
    await round();
    expect(outcomes).toEqual([{ kind: 'poll-failed', key: expect.any(String), jobId: asked, code: 'ERR_POLL_ANSWER_MISMATCH' }]);
    expect(handled).toEqual([]);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.fields['jobId'])).toEqual([asked]);
    expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
    expect(await webhook(other)).toBe('handled');
  });

  it("checks the answer itself when the client is one of your own that does not: another job's answer is refused", async () => {
    const asked = await submit();
    const other = randomUUID();
    const real = client;
    client = { ...real, getJob: async () => JSON.parse(finished(other)) } as Client;
    await round();
    expect(outcomes).toEqual([{ kind: 'poll-failed', key: expect.any(String), jobId: asked, code: 'ERR_POLL_ANSWER_MISMATCH' }]);
    expect(handled).toEqual([]);
    expect(await webhook(other)).toBe('handled');
  });

  it('takes the asked job in upper case as the same job: handled once, its webhook a duplicate', async () => {
    const asked = await submit();
    service.faults.push(answer(finished(asked.toUpperCase())));
    await round();
    expect(outcomes.map((o) => o.kind)).toEqual(['reconciled']);
    expect(await webhook(asked)).toBe('duplicate');
    expect(handled).toHaveLength(1);
  });

  it('refuses an answer with two job_id keys, even when the last names the job asked for', async () => {
    const asked = await submit();
    const other = randomUUID();
    service.faults.push(answer(twoIds(other, asked)));
    await round();
    expect(outcomes).toEqual([{ kind: 'poll-failed', key: expect.any(String), jobId: asked, code: 'ERR_POLL_ANSWER_MISMATCH' }]);
    expect(handled).toEqual([]);
    expect(await webhook(asked)).toBe('handled');
    expect(await webhook(other)).toBe('handled');
  });

  it('abandons a job whose answer is over maxAnswerBytes: reason answer-too-large, its metric, a line naming the job', async () => {
    wire({ maxAnswerBytes: 512 });
    const jobId = await submit({ text: 'x'.repeat(600) });
    const small = await submit({ text: 'small' });
    await round();
    expect(outcomes).toEqual(
      expect.arrayContaining([
        { kind: 'abandoned', key: expect.any(String), jobId, reason: 'answer-too-large' },
        { kind: 'reconciled', key: expect.any(String), jobId: small },
      ]),
    );
    expect(handled.map((e) => e.job_id)).toEqual([small]);
    const line = log.lines.find((l) => l.fields['reason'] === 'answer-too-large');
    expect(line).toMatchObject({ level: 'warn', fields: { jobId } });
    expect(line?.msg).toContain(`GET /v3/universal-ai/async/${jobId}`);
    const abandoned = await registry.getSingleMetric('jobhook_jobs_abandoned_total')?.get();
    expect(abandoned?.values).toEqual([{ labels: { reason: 'answer-too-large' }, value: 1 }]);
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
  });

  it('hands the handler user_parameters without the recipient tag (receiver.handlePolled)', async () => {
    const jobId = await submit();
    service.faults.push(answer(finished(jobId, { user_parameters: { order: 7, [RECIPIENT_TAG_KEY]: TAG } })));
    await round();
    expect(handled).toHaveLength(1);
    expect(handled[0]?.user_parameters).toEqual({ order: 7 });
  });
});
