/**
 * The client and the result waiter against the real reference sender (`createSender` on a free
 * port) and a real core receiver on another port, the sender signing and POSTing its webhooks.
 */
import { randomUUID } from 'node:crypto';
import { createMemoryStore, createReceiver, type Receiver } from '@jobhook/core';
import { rawJson } from '@jobhook/core/json';
import { createSender, type AccountsConfig, type Sender } from '@jobhook/sender';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createResultWaiter, ServiceApiError, type Client, type JobResult, type ResultWaiter } from '../src/index.js';
import { eventually, startReceiverServer, type ReceiverServer } from './helpers/receiver-server.js';

const RICH_TOKEN = `jh_inf_${'r'.repeat(32)}`;
const BROKE_TOKEN = `jh_inf_${'b'.repeat(32)}`;
const MODEL = 'ocr/ocr_async/amazon';

function key(token: string, balance: number): AccountsConfig['organizations'][number]['keys'][number] {
  return {
    id: randomUUID(),
    token,
    kind: 'inference',
    name: token.slice(0, 12),
    member: 'ada@acme.test',
    active_balance: true,
    balance,
    revoked: false,
  };
}

const ACCOUNTS: AccountsConfig = {
  organizations: [{ id: 'acme', members: ['ada@acme.test'], keys: [key(RICH_TOKEN, 1000), key(BROKE_TOKEN, 0)] }],
};

let sender: Sender;
let baseUrl: string;
let client: Client;
/** GET requests the client sent, counted through an injected fetch (the real one, wrapped). */
let polls = 0;

const countingFetch: typeof fetch = (input, init) => {
  if ((init?.method ?? 'GET') === 'GET') polls++;
  return fetch(input, init);
};

beforeAll(async () => {
  sender = await createSender({
    accounts: ACCOUNTS,
    allowInsecureReceivers: true,
    receiverAllowlist: ['127.0.0.0/8'],
    retryBaseMs: 20,
    maxRetryDelayMs: 100,
    attemptTimeoutMs: 1_000,
    jobDelayMs: 0,
  });
  baseUrl = await sender.listen({ port: 0 });
  client = createClient({ baseUrl, apiKey: RICH_TOKEN, fetch: countingFetch, timeoutMs: 2_000 });
});
afterAll(() => sender.close());

async function rejection(promise: Promise<unknown>): Promise<ServiceApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceApiError);
  return err as ServiceApiError;
}

describe('client against the reference sender', () => {
  it('submits and polls to success, numbers exact both ways', async () => {
    const submitted = await client.submitJob({
      model: MODEL,
      input: { file: 'https://files.example.com/a.pdf', simulate: { outcome: 'success', delay_ms: 80, output: { pages: 2 } } },
      user_webhook_parameters: rawJson('{"order": 123456789012345678901234567890, "ratio": 1.0}'),
    });
    expect(submitted).toMatchObject({ status: 'processing' });
    expect(submitted.job_id).toMatch(/^[0-9a-f-]{36}$/);
    const job = await client.pollJob(submitted.job_id, { intervalMs: 20 });
    expect(job).toMatchObject({ job_id: submitted.job_id, status: 'success', output: { pages: 2 }, feature: 'ocr', provider: 'amazon' });
    expect(typeof job.cost).toBe('string');
    expect(job['user_parameters']).toEqual({ order: 123456789012345678901234567890n, ratio: 1 });
  });

  it('submits and polls to fail with the error code', async () => {
    const { job_id } = await client.submitJob({
      model: MODEL,
      input: { file: 'x', simulate: { outcome: 'fail', error_code: 'provider_timeout' } },
    });
    const job = await client.pollJob(job_id, { intervalMs: 20 });
    expect(job.status).toBe('fail');
    expect(job.error).toMatchObject({ error_code: 'provider_timeout' });
    expect(typeof job.error?.message).toBe('string');
  });

  it('rejects 401, 402, 404, 400 and 409 with typed errors and the service detail', async () => {
    const unauthorized = await rejection(createClient({ baseUrl, apiKey: 'wrong-token-000000' }).pollJob(randomUUID()));
    expect([unauthorized.code, unauthorized.status]).toEqual(['ERR_UNAUTHORIZED', 401]);
    const broke = await rejection(createClient({ baseUrl, apiKey: BROKE_TOKEN }).submitJob({ model: MODEL, input: { file: 'x' } }));
    expect([broke.code, broke.status]).toEqual(['ERR_PAYMENT_REQUIRED', 402]);
    const missing = await rejection(client.getJob(randomUUID()));
    expect([missing.code, missing.status]).toEqual(['ERR_NOT_FOUND', 404]);
    const bad = await rejection(client.submitJob({ model: 'not-a-model', input: {} }));
    expect([bad.code, bad.status]).toEqual(['ERR_BAD_REQUEST', 400]);
    expect(bad.detail).toContain('model');
    const { job_id } = await client.submitJob({ model: MODEL, input: { file: 'x', simulate: { delay_ms: 1_000 } } });
    const conflict = await rejection(client.redeliver(job_id));
    expect([conflict.code, conflict.status]).toEqual(['ERR_CONFLICT', 409]);
    for (const err of [unauthorized, broke, missing, bad, conflict]) expect(err.detail).toBeTruthy();
  });
});

describe('result waiter', () => {
  let receiver: Receiver;
  let hooks: ReceiverServer;
  let waiter: ResultWaiter;
  let results: JobResult[];

  async function wire(options: { webhooks: boolean; webhookGraceMs?: number; onResultMs?: number }): Promise<void> {
    results = [];
    waiter = createResultWaiter({
      client,
      store: createMemoryStore(),
      webhooks: options.webhooks,
      pollIntervalMs: 10,
      timeoutMs: 5_000,
      ...(options.webhookGraceMs === undefined ? {} : { webhookGraceMs: options.webhookGraceMs }),
      onResult: async (result) => {
        results.push(result);
        if (options.onResultMs !== undefined) await new Promise((r) => setTimeout(r, options.onResultMs));
      },
    });
    receiver = createReceiver({ publicKeys: sender.publicKeyPem, store: waiter.store, onEvent: waiter.handleEvent });
    hooks = await startReceiverServer(receiver);
  }

  afterEach(async () => {
    await hooks.close();
    await waiter.close();
    await waiter.store.close();
    await receiver.close();
  });

  async function submit(delayMs: number, webhook = true): Promise<string> {
    const { job_id } = await client.submitJob({
      model: MODEL,
      input: { file: 'x', simulate: { outcome: 'success', delay_ms: delayMs, output: { text: 'done' } } },
      ...(webhook ? { webhook_receiver: hooks.url } : {}),
    });
    return job_id;
  }

  it('takes the verified webhook without polling when it comes within the grace period', async () => {
    await wire({ webhooks: true, webhookGraceMs: 3_000 });
    const jobId = await submit(30);
    const before = polls;
    const result = await waiter.waitForResult(jobId);
    expect(result).toMatchObject({ jobId, status: 'success', source: 'webhook', output: { text: 'done' }, error: null });
    expect(result.data).toMatchObject({ event: 'async_job_completed', job_id: jobId });
    expect(polls - before).toBe(0);
    expect(results.map((r) => r.jobId)).toEqual([jobId]);
    await eventually(() => hooks.answers.length > 0); // the answer is written after onResult
    expect(hooks.answers.map((a) => a.kind)).toEqual(['handled']);
    // a wait that starts after the webhook resolves at once, from memory
    expect(await waiter.waitForResult(jobId)).toBe(result);
  });

  it('falls back to polling when no receiver is wired', async () => {
    await wire({ webhooks: false });
    const jobId = await submit(40, false);
    const result = await waiter.waitForResult(jobId);
    expect(result).toMatchObject({ jobId, status: 'success', source: 'poll', output: { text: 'done' } });
    expect(results).toHaveLength(1);
    // several waits on the same job share the one result; onResult still ran once
    const again = await Promise.all([waiter.waitForResult(jobId), waiter.waitForResult(jobId)]);
    expect(again.every((r) => r.jobId === jobId)).toBe(true);
    expect(results).toHaveLength(1);
  });

  it('answers a webhook that arrives after polling handled the job as a duplicate; onResult ran once', async () => {
    await wire({ webhooks: true, webhookGraceMs: 0 });
    let open!: () => void;
    hooks.gate = new Promise<void>((r) => (open = r));
    const jobId = await submit(0);
    const result = await waiter.waitForResult(jobId);
    expect(result.source).toBe('poll');
    open();
    await eventually(() => hooks.answers.length === 1);
    expect(hooks.answers[0]).toMatchObject({ kind: 'duplicate', status: 200, jobId });
    await eventually(async () => (await client.getDeliveries(jobId)).delivery === 'delivered');
    expect(results).toHaveLength(1);
  });

  it('waits for a webhook handler running while polling sees the job final; onResult ran once', async () => {
    // The webhook comes within ms and its onResult runs 300 ms; polling starts at 100 ms and finds
    // the job final but claimed (in flight), so it waits for the webhook path instead of running it.
    await wire({ webhooks: true, webhookGraceMs: 100, onResultMs: 300 });
    const jobId = await submit(0);
    const before = polls;
    const result = await waiter.waitForResult(jobId);
    expect(polls - before).toBeGreaterThan(0);
    expect(result.source).toBe('webhook');
    expect(results).toHaveLength(1);
    await eventually(() => hooks.answers.length > 0); // the answer is written after onResult
    expect(hooks.answers.map((a) => a.kind)).toEqual(['handled']);
  });

  it('runs onResult once per job when both paths race on many jobs', async () => {
    await wire({ webhooks: true, webhookGraceMs: 0 });
    const jobIds = await Promise.all(Array.from({ length: 10 }, (_, i) => submit(i * 5)));
    const settled = await Promise.all(jobIds.map((id) => waiter.waitForResult(id)));
    expect(settled.map((r) => r.jobId)).toEqual(jobIds);
    // A webhook that finds the poll path's claim is answered 503 in-flight and retried by the sender,
    // so wait until every job has its final answer: handled (webhook won) or duplicate (polling won).
    const finalAnswer = (id: string) => hooks.answers.find((a) => a.jobId === id && (a.kind === 'handled' || a.kind === 'duplicate'));
    await eventually(() => jobIds.every((id) => finalAnswer(id) !== undefined));
    expect(results.map((r) => r.jobId).sort()).toEqual([...jobIds].sort());
    for (const r of settled) expect(finalAnswer(r.jobId)!.kind).toBe(r.source === 'webhook' ? 'handled' : 'duplicate');
    expect(hooks.answers.every((a) => ['handled', 'duplicate', 'in-flight'].includes(a.kind))).toBe(true);
  });

  it('times out with ERR_TIMEOUT and stops on abort', async () => {
    await wire({ webhooks: true, webhookGraceMs: 0 });
    const jobId = await submit(10_000);
    const err = await rejection(waiter.waitForResult(jobId, { timeoutMs: 150 }));
    expect(err.code).toBe('ERR_TIMEOUT');
    // The wait's own 150 ms ran out (its timer, or the poll loop's deadline cut to what was left),
    // not the waiter's 5 s default: said by the message, not by a wall clock.
    const budget = /within (\d+) ms|not final after (\d+) ms/.exec(err.message);
    expect(budget).not.toBeNull();
    expect(Number(budget![1] ?? budget![2])).toBeLessThanOrEqual(150);
    const controller = new AbortController();
    const waiting = waiter.waitForResult(jobId, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(results).toHaveLength(0);
  });
});
