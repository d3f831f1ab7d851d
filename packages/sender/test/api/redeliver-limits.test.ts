// POST …/{job_id}/redeliver is limited per job: 429 with Retry-After within redeliverCooldownMs of
// the last redeliver (default 10 s), 409 after maxRedeliveries (default 20). Time is an injected
// clock (the sender's `now`), moved by hand: no sleeps decide an outcome.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { Sender, SenderOptions } from '../../src/index.js';
import { startReceiver, startTestSender, TOKENS, waitFor, type TestReceiver } from '../sender/sender-fixtures.js';

const T = TOKENS.uncapped;
let receiver: TestReceiver;
let redis: RedisServer;
const senders: Sender[] = [];

beforeAll(async () => {
  // Every test sender signs with the same test key.
  const probe = await startTestSender();
  receiver = await startReceiver(probe.sender.publicKeyPem);
  await probe.sender.close();
  redis = await startRedisServer();
});
afterEach(async () => {
  await Promise.allSettled(senders.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await receiver?.close();
  await redis?.dispose();
});

/**
 * A clock the test moves: starts now, as the receiver refuses events that finished longer ago than
 * its maxEventAgeMs (a fixed past instant would make every webhook a replay).
 */
function manualClock() {
  let ms = Date.now();
  return { now: () => new Date(ms), advance: (by: number) => void (ms += by) };
}

async function start(options: SenderOptions): Promise<Sender> {
  const { sender } = await startTestSender(options);
  senders.push(sender);
  return sender;
}

async function call(sender: Sender, method: 'GET' | 'POST', url: string, payload?: unknown) {
  const res = await sender.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${T}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, headers: res.headers, json: res.json() as Record<string, unknown> };
}

const redeliver = (sender: Sender, jobId: string) => call(sender, 'POST', `/v3/universal-ai/async/${jobId}/redeliver`);

/** Waits until the job's round `round` has ended delivered (the receiver answers 200). */
async function delivered(sender: Sender, jobId: string, round: number): Promise<void> {
  await waitFor(async () => {
    const { json } = await call(sender, 'GET', `/v3/universal-ai/async/${jobId}/deliveries`);
    return json.round === round && json.delivery === 'delivered';
  }, `round ${round} delivered`);
}

/** Submits a job with the receiver and waits for its round 0 to be delivered. */
async function deliveredJob(sender: Sender): Promise<string> {
  const submitted = await call(sender, 'POST', '/v3/universal-ai/async', {
    model: 'ocr/ocr_async/google',
    input: { file: 'x' },
    webhook_receiver: receiver.url,
  });
  expect(submitted.status).toBe(201);
  const jobId = submitted.json.job_id as string;
  await delivered(sender, jobId, 0);
  return jobId;
}

describe('redeliver cooldown (default 10 s)', () => {
  test('a second redeliver within 10 s: 429 with Retry-After counting down; at 10 s: 202', async () => {
    const clock = manualClock();
    const sender = await start({ now: clock.now });
    const jobId = await deliveredJob(sender);

    expect(await redeliver(sender, jobId)).toMatchObject({ status: 202, json: { job_id: jobId, round: 1 } });
    await delivered(sender, jobId, 1);

    const early = await redeliver(sender, jobId);
    expect(early.status).toBe(429);
    expect(early.headers['retry-after']).toBe('10');
    expect(early.json).toEqual({ detail: 'this job was redelivered less than the cooldown ago; retry in 10 s' });
    clock.advance(9_001);
    const later = await redeliver(sender, jobId);
    expect([later.status, later.headers['retry-after']]).toEqual([429, '1']);
    clock.advance(999);
    expect(await redeliver(sender, jobId)).toMatchObject({ status: 202, json: { round: 2 } });
    await delivered(sender, jobId, 2);
    // Round 0, 1, 2: one webhook each, nothing for the refused calls.
    expect(receiver.requests.filter((r) => r.rawBody.toString('utf8').includes(jobId))).toHaveLength(3);
  });

  test('redeliverCooldownMs configurable: 0 turns it off', async () => {
    const sender = await start({ now: manualClock().now, redeliverCooldownMs: 0 });
    const jobId = await deliveredJob(sender);
    for (const round of [1, 2, 3]) {
      expect(await redeliver(sender, jobId)).toMatchObject({ status: 202, json: { round } });
      await delivered(sender, jobId, round);
    }
  });

  test('shared by every sender on one Redis: a redeliver through one holds the other back', async () => {
    const clock = manualClock();
    const redisPrefix = `rl${process.pid}x${Date.now()}`;
    const a = await start({ now: clock.now, redisUrl: redis.url, redisPrefix });
    const b = await start({ now: clock.now, redisUrl: redis.url, redisPrefix });
    const jobId = await deliveredJob(a);
    expect((await redeliver(a, jobId)).status).toBe(202);
    await delivered(b, jobId, 1);
    const refused = await redeliver(b, jobId);
    expect([refused.status, refused.headers['retry-after']]).toEqual([429, '10']);
    clock.advance(10_000);
    expect(await redeliver(b, jobId)).toMatchObject({ status: 202, json: { round: 2 } });
  });
});

describe('redeliver limit per job (default 20)', () => {
  test('after maxRedeliveries: 409 for good, whatever the clock', async () => {
    const clock = manualClock();
    // The memory store keeps the finished job past the day the clock moves (default: 24 h).
    const sender = await start({ now: clock.now, maxRedeliveries: 2, storedJobTtlMs: 7 * 86_400_000 });
    const jobId = await deliveredJob(sender);
    for (const round of [1, 2]) {
      expect(await redeliver(sender, jobId)).toMatchObject({ status: 202, json: { round } });
      await delivered(sender, jobId, round);
      clock.advance(10_000);
    }
    const refused = await redeliver(sender, jobId);
    expect(refused.status).toBe(409);
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(refused.json).toEqual({ detail: 'this job was redelivered 2 times, the most allowed for one job; it is not redelivered again' });
    clock.advance(86_400_000);
    expect((await redeliver(sender, jobId)).status).toBe(409);
  });

  test('the defaults: 20 redeliveries, then 409', async () => {
    const clock = manualClock();
    const sender = await start({ now: clock.now });
    const jobId = await deliveredJob(sender);
    for (let round = 1; round <= 20; round++) {
      expect((await redeliver(sender, jobId)).status).toBe(202);
      await delivered(sender, jobId, round);
      clock.advance(10_000);
    }
    expect((await redeliver(sender, jobId)).status).toBe(409);
  });

  test('the options are checked at construction', async () => {
    const { createSender } = await import('../../src/index.js');
    await expect(createSender({ redeliverCooldownMs: -1 })).rejects.toThrow('redeliverCooldownMs must be an integer from 0 to 86400000');
    await expect(createSender({ maxRedeliveries: 1.5 })).rejects.toThrow('maxRedeliveries must be an integer from 0 to 1000000');
  });
});
