// GET /v3/universal-ai/async (the organization's jobs, newest first, paginated and filtered) and
// GET …/counts (all of them, counted), GET …/{job_id}/webhook (the webhook as sent), against the memory and the Redis job store.
import { canonicalize } from '@jobhook/core/canonical';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { Sender } from '../../src/index.js';
import {
  bearer,
  pollUntilFinal,
  startReceiver,
  startTestSender,
  submitJob,
  TOKENS,
  waitFor,
  type TestReceiver,
} from '../sender/sender-fixtures.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.dispose();
});

interface ListAnswer {
  jobs: { job_id: string; status: string; webhook?: { delivery: string } }[];
  next_cursor: string | null;
}

const stores = [
  { name: 'memory', options: () => ({}) },
  { name: 'redis', options: () => ({ redisUrl: redis.url, redisPrefix: `list${process.pid}x${Date.now()}` }) },
];

describe.each(stores)('job list and webhook view: $name store', ({ options }) => {
  let sender: Sender;
  let baseUrl: string;
  let receiver: TestReceiver;
  const submitted: string[] = [];

  async function list(query: string, token: string = TOKENS.uncapped): Promise<{ status: number; json: ListAnswer & { detail?: string } }> {
    const res = await fetch(`${baseUrl}/v3/universal-ai/async${query}`, { headers: bearer(token) });
    return { status: res.status, json: (await res.json()) as ListAnswer & { detail?: string } };
  }

  beforeAll(async () => {
    ({ sender, baseUrl } = await startTestSender(options()));
    receiver = await startReceiver(sender.publicKeyPem);
    // Five jobs: two that fail, one with a receiver; submitted one after the other so their order is known.
    const bodies = [
      { model: 'ocr/ocr_async/google', input: { simulate: { outcome: 'fail' } } },
      { model: 'ocr/ocr_async/google', input: {} },
      { model: 'audio/speech_to_text_async/openai', input: { file: 'https://x.test/a.wav' }, webhook_receiver: receiver.url },
      { model: 'ocr/ocr_async/google', input: { simulate: { outcome: 'fail' } } },
      { model: 'ocr/ocr_async/google', input: {} },
    ];
    for (const body of bodies) {
      const answer = await submitJob(baseUrl, TOKENS.uncapped, body);
      expect(answer.status).toBe(201);
      submitted.push(answer.json.job_id as string);
    }
    for (const jobId of submitted) await pollUntilFinal(baseUrl, TOKENS.uncapped, jobId);
    await waitFor(async () => (await list('?delivery=delivered')).json.jobs.length === 1, 'the delivery');
  });
  afterAll(async () => {
    await sender?.close();
    await receiver?.close();
  });

  test('pages through the organization jobs newest first, each as polled, the last cursor null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const { status, json }: { status: number; json: ListAnswer } = await list(`?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(status).toBe(200);
      expect(json.jobs.length).toBeLessThanOrEqual(2);
      seen.push(...json.jobs.map((j) => j.job_id));
      cursor = json.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual([...submitted].reverse());
    expect(pages).toBe(3);
    const first = (await list('?limit=1')).json.jobs[0]!;
    const polled = await (await fetch(`${baseUrl}/v3/universal-ai/async/${first.job_id}`, { headers: bearer(TOKENS.uncapped) })).json();
    expect(first).toEqual(polled);
  });

  test('filters by status and by delivery state (none: no receiver)', async () => {
    const failed = await list('?status=fail');
    expect(failed.json.jobs.map((j) => j.job_id)).toEqual([submitted[3], submitted[0]]);
    expect(failed.json.next_cursor).toBeNull();
    expect((await list('?delivery=delivered')).json.jobs.map((j) => j.job_id)).toEqual([submitted[2]]);
    expect((await list('?delivery=none&status=success')).json.jobs.map((j) => j.job_id)).toEqual([submitted[4], submitted[1]]);
  });

  test('counts all the organization jobs by status and delivery state, and no other organization', async () => {
    const counts = async (token: string) => {
      const res = await fetch(`${baseUrl}/v3/universal-ai/async/counts`, { headers: bearer(token) });
      expect(res.status).toBe(200);
      return res.json();
    };
    expect(await counts(TOKENS.uncapped)).toEqual({
      jobs: 5,
      status: { processing: 0, success: 3, fail: 2 },
      delivery: { pending: 0, delivered: 1, rejected: 0, failed: 0, none: 4 },
    });
    expect(await counts(TOKENS.globexInference)).toMatchObject({ jobs: 0 });
    expect((await fetch(`${baseUrl}/v3/universal-ai/async/counts`)).status).toBe(401);
    expect((await fetch(`${baseUrl}/v3/universal-ai/async/counts`, { headers: bearer(TOKENS.management) })).status).toBe(401);
    const withQuery = await fetch(`${baseUrl}/v3/universal-ai/async/counts?status=fail`, { headers: bearer(TOKENS.uncapped) });
    expect(withQuery.status).toBe(400);
    expect(await withQuery.json()).toEqual({ detail: 'unknown query parameter status: counts takes none' });
  });

  test("another organization's key lists none of them; no key is 401", async () => {
    const other = await list('', TOKENS.globexInference);
    expect(other.status).toBe(200);
    expect(other.json).toEqual({ jobs: [], next_cursor: null });
    expect((await fetch(`${baseUrl}/v3/universal-ai/async`)).status).toBe(401);
  });

  test.each([
    ['?limit=0', 'limit must be an integer from 1 to 100'],
    ['?limit=101', 'limit must be an integer from 1 to 100'],
    ['?status=done', 'status must be one of processing, success, fail'],
    ['?delivery=lost', 'delivery must be one of pending, delivered, rejected, failed, none'],
    ['?cursor=abc', 'cursor must be the next_cursor of a previous page'],
    ['?status=fail&status=success', 'status must be given once'],
    ['?page=2', 'unknown query parameter page: use limit, cursor, status, delivery'],
  ])('%s is 400: %s', async (query, detail) => {
    const answer = await list(query);
    expect(answer.status).toBe(400);
    expect(answer.json.detail).toBe(detail);
  });

  test('the webhook view holds the body, the signature headers and the canonical form the receiver got', async () => {
    const jobId = submitted[2]!;
    const res = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}/webhook`, { headers: bearer(TOKENS.uncapped) });
    expect(res.status).toBe(200);
    const view = (await res.json()) as { job_id: string; body: string; canonical: string; headers: Record<string, string> };
    const got = receiver.requests.find((r) => r.rawBody.toString('utf8').includes(jobId))!;
    expect(view.job_id).toBe(jobId);
    expect(view.body).toBe(got.rawBody.toString('utf8'));
    expect(view.headers['X-Service-Signature']).toBe(got.headers['x-service-signature']);
    expect(view.headers['User-Agent']).toBe(got.headers['user-agent']);
    expect(view.canonical).toBe(canonicalize(got.rawBody).toString('utf8'));
    // Not another organization's, like every job route.
    expect((await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}/webhook`, { headers: bearer(TOKENS.globexInference) })).status).toBe(
      404,
    );
  });
});
