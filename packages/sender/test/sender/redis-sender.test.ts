// createSender with redisUrl: jobs in Redis, work in BullMQ, credits in Redis, shared by two senders
// (a real redis-server).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { Sender } from '../../src/index.js';
import {
  bearer,
  KEY_IDS,
  pollUntilFinal,
  startReceiver,
  startTestSender,
  submitJob,
  TOKENS,
  waitFor,
  type TestReceiver,
} from './sender-fixtures.js';

let redis: RedisServer;
let redisPrefix: string;
let a: { sender: Sender; baseUrl: string };
let b: { sender: Sender; baseUrl: string };
let receiver: TestReceiver;

beforeAll(async () => {
  redis = await startRedisServer();
  redisPrefix = `t${process.pid}x${Date.now()}`;
  a = await startTestSender({ redisUrl: redis.url, redisPrefix });
  b = await startTestSender({ redisUrl: redis.url, redisPrefix });
  receiver = await startReceiver(a.sender.publicKeyPem);
});
afterAll(async () => {
  await Promise.allSettled([a?.sender.close(), b?.sender.close()]);
  await receiver?.close();
  await redis?.dispose();
});

test('a job submitted to one sender is finished, delivered once and visible through the other', async () => {
  const body =
    '{"model":"ocr/ocr_async/google","input":{"file":"x"},"webhook_receiver":"RECEIVER","user_webhook_parameters":{"n":1.0,"big":1180591620717411303424}}';
  const submitted = await submitJob(a.baseUrl, TOKENS.uncapped, body.replace('RECEIVER', receiver.url));
  expect(submitted.status).toBe(201);
  const jobId = submitted.json.job_id as string;

  const { json, text } = await pollUntilFinal(b.baseUrl, TOKENS.uncapped, jobId);
  expect(json.status).toBe('success');
  expect(text).toContain('"user_parameters":{"n":1.0,"big":1180591620717411303424}');

  await waitFor(() => receiver.requests.length === 1, 'the webhook');
  expect(receiver.requests[0]!.status).toBe(200); // verified: both senders sign with the same key here
  expect(receiver.requests[0]!.rawBody.toString('utf8')).toContain('"n": 1.0');
  await waitFor(async () => {
    const res = await fetch(`${b.baseUrl}/v3/universal-ai/async/${jobId}/deliveries`, { headers: bearer(TOKENS.uncapped) });
    return ((await res.json()) as { delivery: string }).delivery === 'delivered';
  }, 'delivered through the other sender');
  // Once: the delivery log both senders share holds one attempt, and the receiver got one request
  // (read from the log rather than after a sleep that a late second delivery would have to beat).
  for (const { baseUrl } of [a, b]) {
    const res = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}/deliveries`, { headers: bearer(TOKENS.uncapped) });
    const { attempts } = (await res.json()) as { attempts: { attempt: number; outcome: string; status_code: number }[] };
    expect(attempts.map((x) => [x.attempt, x.outcome, x.status_code])).toEqual([[1, 'delivered', 200]]);
  }
  expect(receiver.requests).toHaveLength(1);
});

test('credits are shared: the poor key (0.05) pays one ocr job (0.03) on one sender, the other then answers 402; a restarted sender keeps the balance', async () => {
  const ocr = { model: 'ocr/ocr_async/google', input: { file: 'x' } };
  const balance = async (baseUrl: string) => {
    const res = await fetch(`${baseUrl}/v3/manage/keys/${KEY_IDS.poor}/`, { headers: bearer(TOKENS.management) });
    return ((await res.json()) as { balance: number }).balance;
  };
  expect((await submitJob(a.baseUrl, TOKENS.poor, ocr)).status).toBe(201);
  const refused = await submitJob(b.baseUrl, TOKENS.poor, ocr);
  expect(refused.status).toBe(402);
  expect(refused.json.detail).toBe("insufficient credits: this request costs 0.03, the key's balance is 0.02");
  expect(await balance(a.baseUrl)).toBe(0.02);
  expect(await balance(b.baseUrl)).toBe(0.02);

  const c = await startTestSender({ redisUrl: redis.url, redisPrefix });
  try {
    expect(await balance(c.baseUrl)).toBe(0.02);
    expect((await submitJob(c.baseUrl, TOKENS.poor, ocr)).status).toBe(402);
    expect((await c.sender.usage()).find((u) => u.keyId === KEY_IDS.poor)).toMatchObject({ requests: 1, spent: 0.03, balance: 0.02 });
  } finally {
    await c.sender.close();
  }
});

test('a --api-key key keeps its usage and balance across restarts on Redis, though its id is new at each start', async () => {
  const apiKeys = ['cli_given_restartKey0123456789'];
  const first = await startTestSender({ redisUrl: redis.url, redisPrefix, apiKeys });
  let firstId: string | null | undefined;
  try {
    expect((await submitJob(first.baseUrl, apiKeys[0]!, { model: 'ocr/ocr_async/google', input: { file: 'x' } })).status).toBe(201);
    const usage = (await first.sender.usage()).at(-1)!;
    expect(usage).toMatchObject({ requests: 1, spent: 0.03, balance: 999.97 });
    firstId = usage.keyId;
  } finally {
    await first.sender.close();
  }
  const second = await startTestSender({ redisUrl: redis.url, redisPrefix, apiKeys });
  try {
    const usage = (await second.sender.usage()).at(-1)!;
    expect(usage).toMatchObject({ requests: 1, spent: 0.03, balance: 999.97 });
    expect(usage.keyId).not.toBe(firstId);
  } finally {
    await second.sender.close();
  }
});
