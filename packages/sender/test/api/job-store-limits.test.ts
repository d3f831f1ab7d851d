// The memory job store behind the API: a job forgotten after storedJobTtlMs answers 404 like an
// unknown job, and a store full of unfinished jobs refuses submissions with 503 + Retry-After,
// charging nothing.
import { afterEach, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { bearer, pollUntilFinal, startTestSender, submitJob, TOKENS } from '../sender/sender-fixtures.js';

const senders: Sender[] = [];
afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.close()));
});

async function start(options: Parameters<typeof startTestSender>[0]) {
  const started = await startTestSender(options);
  senders.push(started.sender);
  return started;
}

async function poll(baseUrl: string, jobId: string) {
  const res = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers: bearer(TOKENS.inference) });
  return { status: res.status, text: await res.text() };
}

const balanceOf = async (sender: Sender, token: string) => (await sender.usage()).find((u) => u.masked.endsWith(token.slice(-4)))!;

describe('memory job store limits through the API', () => {
  test('a finished job is forgotten storedJobTtlMs after it finished: 404, the same answer as an unknown job', async () => {
    let offsetMs = 0;
    const { baseUrl } = await start({ storedJobTtlMs: 60_000, now: () => new Date(Date.now() + offsetMs) });
    const { status, json } = await submitJob(baseUrl, TOKENS.inference, {
      model: 'text/summarize/openai',
      input: { simulate: { delay_ms: 0 } },
    });
    expect(status).toBe(201);
    const jobId = json.job_id as string;
    await pollUntilFinal(baseUrl, TOKENS.inference, jobId);
    expect((await poll(baseUrl, jobId)).status).toBe(200);

    offsetMs = 60_001;
    const gone = await poll(baseUrl, jobId);
    const unknown = await poll(baseUrl, '00000000-0000-4000-8000-000000000000');
    expect(gone).toEqual({ status: 404, text: unknown.text });
    const deliveries = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}/deliveries`, { headers: bearer(TOKENS.inference) });
    expect(deliveries.status).toBe(404);
  });

  test('unfinished jobs filling maxStoredJobs: the next submission gets 503 with Retry-After, and costs nothing', async () => {
    const { sender, baseUrl } = await start({ maxStoredJobs: 2 });
    const held = { model: 'text/summarize/openai', input: { simulate: { delay_ms: 600_000 } } };
    for (let i = 0; i < 2; i++) expect((await submitJob(baseUrl, TOKENS.inference, held)).status).toBe(201);
    const before = await balanceOf(sender, TOKENS.inference);

    const res = await fetch(`${baseUrl}/v3/universal-ai/async`, {
      method: 'POST',
      headers: { ...bearer(TOKENS.inference), 'content-type': 'application/json' },
      body: JSON.stringify(held),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    const body = (await res.json()) as { detail: string };
    expect(Object.keys(body)).toEqual(['detail']);
    expect(body.detail).toContain('unfinished jobs');
    expect((await balanceOf(sender, TOKENS.inference)).balance).toBe(before.balance);
  });

  test('maxStoredJobs, maxStoredJobBytes and storedJobTtlMs are checked at construction (3e9 ms refused)', async () => {
    const { createSender } = await import('../../src/index.js');
    await expect(createSender({ storedJobTtlMs: 3e9 })).rejects.toMatchObject({
      code: 'ERR_OPTION_INVALID',
      message: expect.stringContaining('storedJobTtlMs must be an integer from 1 to 2147483647, got 3000000000'),
    });
    await expect(createSender({ maxStoredJobs: 0 })).rejects.toMatchObject({
      code: 'ERR_OPTION_INVALID',
      message: expect.stringContaining('maxStoredJobs'),
    });
    await expect(createSender({ maxStoredJobBytes: 10 })).rejects.toMatchObject({
      code: 'ERR_OPTION_INVALID',
      message: expect.stringContaining('maxStoredJobBytes'),
    });
  });
});
