// createSender with redisUrl: jobs in Redis, work in BullMQ, shared by two senders (a real redis-server).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { Sender } from '../../src/index.js';
import { bearer, pollUntilFinal, startReceiver, startTestSender, submitJob, TOKENS, waitFor, type TestReceiver } from './sender-fixtures.js';

let redis: RedisServer;
let a: { sender: Sender; baseUrl: string };
let b: { sender: Sender; baseUrl: string };
let receiver: TestReceiver;

beforeAll(async () => {
  redis = await startRedisServer();
  const redisPrefix = `t${process.pid}x${Date.now()}`;
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
  const body = '{"model":"ocr/ocr_async/google","input":{"file":"x"},"webhook_receiver":"RECEIVER","user_webhook_parameters":{"n":1.0,"big":1180591620717411303424}}';
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
  await new Promise((r) => setTimeout(r, 100));
  expect(receiver.requests).toHaveLength(1);
});
