// The submission's webhook_receiver check is bounded and does not reveal internal DNS; a store
// outage is answered 503 (the caller may retry), not 500.
import { afterAll, describe, expect, test, vi } from 'vitest';
import { startRedisServer } from '../../../core/test/helpers/redis-server.js';
import { jsonHeaders, startTestSender, submitJob, TOKENS } from '../sender/sender-fixtures.js';

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('webhook_receiver check at submission', () => {
  test('a host whose DNS never answers is refused within the attempt timeout, not held', async () => {
    let asked!: () => void;
    const lookingUp = new Promise<void>((resolve) => (asked = resolve));
    const { sender, baseUrl } = await startTestSender({
      allowInsecureReceivers: false,
      receiverAllowlist: [],
      attemptTimeoutMs: 300,
      resolveHost: () => {
        asked();
        return new Promise(() => {});
      },
    });
    closers.push(() => sender.close());
    // The lookup's deadline runs on fake timers: once the lookup is under way, advancing them by
    // the attempt timeout (and no more) must get the answer, whatever the wall clock says.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const answer = submitJob(baseUrl, TOKENS.uncapped, {
        model: 'ocr/ocr_async/google',
        input: {},
        webhook_receiver: 'https://hooks.example.com/x',
      });
      await lookingUp;
      await vi.advanceTimersByTimeAsync(300);
      const res = await answer;
      expect(res.status).toBe(400);
      expect(res.json.detail).toMatch(/webhook_receiver refused: the host name did not resolve in time/);
    } finally {
      vi.useRealTimers();
    }
  });

  test('a refusal names the host, never the internal address it resolved to', async () => {
    const { sender, baseUrl } = await startTestSender({
      allowInsecureReceivers: false,
      receiverAllowlist: [],
      resolveHost: async () => [{ address: '10.20.30.40', family: 4 }],
    });
    closers.push(() => sender.close());
    const res = await submitJob(baseUrl, TOKENS.uncapped, {
      model: 'ocr/ocr_async/google',
      input: {},
      webhook_receiver: 'https://db.corp.example.com/x',
    });
    expect(res.status).toBe(400);
    expect(res.json.detail).toBe('webhook_receiver refused: db.corp.example.com resolves to a non-public address');
    expect(res.text).not.toContain('10.20.30.40');
  });
});

describe('store outage', () => {
  test('with Redis down, polling answers 503 {detail}; back up, 200 again', async () => {
    const redis = await startRedisServer({ own: true });
    closers.push(() => redis.dispose());
    const { sender, baseUrl } = await startTestSender({ redisUrl: redis.url });
    closers.push(() => sender.close());
    const submitted = await submitJob(baseUrl, TOKENS.uncapped, { model: 'ocr/ocr_async/google', input: {} });
    expect(submitted.status).toBe(201);
    const url = `${baseUrl}/v3/universal-ai/async/${String(submitted.json.job_id)}`;
    const headers = jsonHeaders(TOKENS.uncapped);

    await redis.stop();
    const down = await fetch(url, { headers });
    expect(down.status).toBe(503);
    expect(typeof ((await down.json()) as { detail: unknown }).detail).toBe('string');

    await redis.restart(); // empty: nothing persisted, so the job is gone, but the service answers again
    // Polled as a client would while it answers 503 (no count of tries: how long the reconnection
    // takes on a busy machine is not the point; never coming back fails at the test timeout).
    let status = 503;
    while (status === 503) {
      status = (await fetch(url, { headers })).status;
      if (status === 503) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(404);
  });
});
