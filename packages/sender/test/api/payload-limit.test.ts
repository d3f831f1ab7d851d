// POST /v3/universal-ai/async refuses, before charging, a job whose webhook payload's canonical form
// may exceed maxCanonicalBytes (default 16 MiB, the receivers' default): deep nesting and many tiny
// values grow with the canonical indentation, so a 240 KB submission can mean a 20 MB+ canonical form.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { startTestSender, TOKENS } from '../sender/sender-fixtures.js';

let sender: Sender; // the default limit
let small: Sender; // maxCanonicalBytes: 1 MiB

beforeAll(async () => {
  ({ sender } = await startTestSender());
  ({ sender: small } = await startTestSender({ maxCanonicalBytes: 1024 * 1024 }));
});
afterAll(async () => {
  await sender?.close();
  await small?.close();
});

const RECEIVER = 'http://127.0.0.1:9/hooks';
/** Jobs accepted here stay processing: nothing is delivered to RECEIVER. */
const HOLD = { delay_ms: 600_000 };

/** `{"p":[ <n arrays nested d deep> ]}` as JSON text. */
function nested(n: number, depth: number): string {
  const one = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  return `{"p":[${Array.from({ length: n }, () => one).join(',')}]}`;
}
/** 240 arrays 500 deep: 240 KB of JSON, a canonical form above 16 MiB. */
const DEEP_240KB = nested(240, 500);

async function submit(target: Sender, body: string, token: string = TOKENS.inference) {
  const res = await target.app.inject({
    method: 'POST',
    url: '/v3/universal-ai/async',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: body,
  });
  return { status: res.statusCode, json: res.json() as Record<string, unknown> };
}

async function usageOf(target: Sender, token: string) {
  const found = (await target.usage()).find((u) => u.masked.endsWith(token.slice(-4)))!;
  return { requests: found.requests, balance: found.balance };
}

const body = (fields: string, input = `{"file":"x","simulate":${JSON.stringify(HOLD)}}`) =>
  `{"model":"text/moderation/openai","input":${input}${fields}}`;

describe('the canonical size of the webhook payload, checked at submission', () => {
  test('deeply nested user_webhook_parameters (240 KB of 500-deep arrays): 413 naming the field, not charged', async () => {
    expect(DEEP_240KB.length).toBeGreaterThan(200_000);
    expect(DEEP_240KB.length).toBeLessThan(250_000);
    const before = await usageOf(sender, TOKENS.inference);
    const { status, json } = await submit(sender, body(`,"webhook_receiver":"${RECEIVER}","user_webhook_parameters":${DEEP_240KB}`));
    expect(status).toBe(413);
    expect(Object.keys(json)).toEqual(['detail']);
    expect(json.detail).toMatch(
      /^user_webhook_parameters would make a webhook payload whose canonical form may exceed the limit of 16777216 bytes/,
    );
    expect(await usageOf(sender, TOKENS.inference)).toEqual(before);
  });

  test('normal user_webhook_parameters with a receiver: accepted (201) and charged', async () => {
    const before = await usageOf(sender, TOKENS.inference);
    const params = '{"order":1.0,"tags":["a","b"],"nested":{"list":[[1,2],[3,4]],"deep":[[[[[[[[[[1]]]]]]]]]]}}';
    const { status, json } = await submit(sender, body(`,"webhook_receiver":"${RECEIVER}","user_webhook_parameters":${params}`));
    expect(status).toBe(201);
    expect(json).toMatchObject({ status: 'processing', webhook: { receiver: RECEIVER, delivery: 'pending', round: 0 } });
    expect((await usageOf(sender, TOKENS.inference)).requests).toBe(before.requests + 1);
  });

  test('the same parameters without webhook_receiver: accepted (no webhook payload is ever canonicalized)', async () => {
    const { status, json } = await submit(sender, body(`,"user_webhook_parameters":${DEEP_240KB}`));
    expect(status).toBe(201);
    expect(json).not.toHaveProperty('webhook');
  });

  test('deeply nested input.simulate.output: 413 naming it', async () => {
    const input = `{"simulate":{"delay_ms":600000,"output":${DEEP_240KB}}}`;
    const { status, json } = await submit(sender, body(`,"webhook_receiver":"${RECEIVER}"`, input));
    expect(status).toBe(413);
    expect(json.detail).toMatch(/^input\.simulate\.output would make a webhook payload/);
  });

  test('maxCanonicalBytes configured lower: an output within it alone is refused once show_original_response sends it twice', async () => {
    const input = `{"simulate":{"delay_ms":600000,"output":${nested(40, 100)}}}`; // 8 KB, ~0.55 MiB canonical
    expect((await submit(small, body(`,"webhook_receiver":"${RECEIVER}"`, input))).status).toBe(201);
    const twice = await submit(small, body(`,"webhook_receiver":"${RECEIVER}","show_original_response":true`, input));
    expect(twice.status).toBe(413);
    expect(twice.json.detail).toMatch(
      /^input\.simulate\.output \(sent twice: as output and in original_response\) would make .* the limit of 1048576 bytes/,
    );
    // The default sender accepts both.
    expect((await submit(sender, body(`,"webhook_receiver":"${RECEIVER}","show_original_response":true`, input))).status).toBe(201);
  });

  test('both fields within the limit alone, over it together: 413 naming both', async () => {
    const half = nested(40, 100);
    const input = `{"simulate":{"delay_ms":600000,"output":${half}}}`;
    const { status, json } = await submit(small, body(`,"webhook_receiver":"${RECEIVER}","user_webhook_parameters":${half}`, input));
    expect(status).toBe(413);
    expect(json.detail).toMatch(/^user_webhook_parameters and input\.simulate\.output together would make/);
  });

  test('a deeply nested input member (never canonicalized) is no reason to refuse nor to fail: the speech-to-text job succeeds', async () => {
    const input = `{"file":"f","language":"de","extra":${DEEP_240KB}}`;
    const { status, json } = await submit(
      sender,
      `{"model":"audio/speech_to_text_async/deepgram","input":${input},"webhook_receiver":"${RECEIVER}"}`,
    );
    expect(status).toBe(201);
    const jobId = json.job_id as string;
    let polled: Record<string, unknown> = {};
    // Polled until final, without a count of tries (a job never final fails at the test timeout).
    while (polled.status !== 'success' && polled.status !== 'fail') {
      await new Promise((r) => setTimeout(r, 10));
      polled = (
        await sender.app.inject({
          method: 'GET',
          url: `/v3/universal-ai/async/${jobId}`,
          headers: { authorization: `Bearer ${TOKENS.inference}` },
        })
      ).json();
    }
    expect(polled).toMatchObject({ status: 'success', output: { language: 'de' } });
  });

  test('maxCanonicalBytes is checked at construction', async () => {
    const { createSender } = await import('../../src/index.js');
    await expect(createSender({ maxCanonicalBytes: 100 })).rejects.toThrow('maxCanonicalBytes must be an integer >= 1024, got 100');
  });
});
