// POST /v3/llm/chat/completions (spec §4.4): validation, the deterministic simulated answer, credits.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { jsonHeaders, startTestSender, TOKENS } from '../sender/sender-fixtures.js';

let sender: Sender;
let baseUrl: string;

beforeAll(async () => {
  ({ sender, baseUrl } = await startTestSender());
});
afterAll(async () => {
  await sender.close();
});

async function chat(body: unknown, token: string = TOKENS.uncapped) {
  const res = await fetch(`${baseUrl}/v3/llm/chat/completions`, {
    method: 'POST',
    headers: jsonHeaders(token),
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const messages = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say hello.' },
];

describe('POST /v3/llm/chat/completions', () => {
  test('answers an OpenAI-shaped completion, the same for the same request', async () => {
    const first = await chat({ model: 'openai/gpt-4o-mini', messages });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      object: 'chat.completion',
      model: 'openai/gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }],
    });
    expect(first.json.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    const usage = first.json.usage as Record<string, number>;
    expect(usage.total_tokens).toBe(usage.prompt_tokens! + usage.completion_tokens!);
    const again = await chat({ model: 'openai/gpt-4o-mini', messages });
    expect(again.json.choices).toEqual(first.json.choices);
    const other = await chat({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say goodbye.' }] });
    expect(other.json.choices).not.toEqual(first.json.choices);
  });

  test('model names may hold slashes after the provider', async () => {
    expect((await chat({ model: 'openrouter/meta-llama/llama-3-8b', messages })).status).toBe(200);
  });

  const bad: [string, unknown, string][] = [
    ['model missing', { messages }, 'model must be a string of the shape <provider>/<model_name>'],
    ['model without a provider', { model: 'gpt-4o', messages }, 'model must be a string of the shape'],
    ['model with an empty name', { model: 'openai/', messages }, 'model must be a string of the shape'],
    ['messages missing', { model: 'openai/gpt-4o' }, 'messages must be an array'],
    ['messages empty', { model: 'openai/gpt-4o', messages: [] }, 'messages must be an array of 1 to 1000'],
    ['a message not an object', { model: 'openai/gpt-4o', messages: ['hi'] }, 'messages[0] must be an object'],
    ['a role missing', { model: 'openai/gpt-4o', messages: [{ content: 'hi' }] }, 'messages[0].role must be a non-empty string'],
    [
      'content not a string',
      { model: 'openai/gpt-4o', messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      'messages[0].content must be a string',
    ],
  ];
  test.each(bad)('400 when %s', async (_name, body, detail) => {
    const { status, json } = await chat(body);
    expect(status).toBe(400);
    expect(json.detail).toContain(detail);
  });

  test('charged per call; 402 {detail} once the balance is below the price', async () => {
    // The "poor" key holds 0.05 credits; a completion costs 0.002: 25 pass, the 26th is refused.
    for (let i = 0; i < 25; i++) expect((await chat({ model: 'openai/gpt-4o', messages }, TOKENS.poor)).status).toBe(200);
    const refused = await chat({ model: 'openai/gpt-4o', messages }, TOKENS.poor);
    expect(refused.status).toBe(402);
    expect(refused.json.detail).toContain('insufficient credits');
    const usage = (await sender.usage()).find((u) => u.keyId === '22222222-2222-4222-8222-222222222222')!;
    expect(usage).toMatchObject({ requests: 25, spent: 0.05, balance: 0 });
  });
});
