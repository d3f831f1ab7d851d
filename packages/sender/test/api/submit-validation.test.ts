// Validation of POST /v3/universal-ai/async (spec §4.2) and the request-level errors of the API.
// Many rows: Fastify inject is enough here (the HTTP contract itself is tested over sockets elsewhere).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { startTestSender, TOKENS } from '../sender/sender-fixtures.js';

let sender: Sender;

beforeAll(async () => {
  ({ sender } = await startTestSender({
    // DNS answers for the SSRF rows, without a network.
    resolveHost: async (host) => {
      if (host === 'hooks.public.test') return [{ address: '93.184.216.34', family: 4 }];
      if (host === 'hooks.internal.test') return [{ address: '10.1.2.3', family: 4 }];
      if (host === 'hooks.mixed.test')
        return [
          { address: '93.184.216.34', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    },
    allowInsecureReceivers: false,
    receiverAllowlist: [],
  }));
});
afterAll(async () => {
  await sender.close();
});

const auth = { authorization: `Bearer ${TOKENS.uncapped}` };

async function submit(body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await sender.app.inject({
    method: 'POST',
    url: '/v3/universal-ai/async',
    headers: { ...auth, ...headers },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  return { status: res.statusCode, json: res.json() as Record<string, unknown>, text: res.body, headers: res.headers };
}

const valid = { model: 'ocr/ocr_async/google', input: { file: 'https://files.example.com/a.pdf' } };

describe('POST /v3/universal-ai/async: 400 naming the field', () => {
  const rows: [string, unknown, string][] = [
    ['model missing', { input: {} }, 'model is required'],
    ['model not a string', { ...valid, model: 3 }, 'model is required: a string'],
    ['model with two segments', { ...valid, model: 'ocr/google' }, 'model must have the shape <feature>/<subfeature>/<provider>'],
    ['model with five segments', { ...valid, model: 'a/b/c/d/e' }, 'model must have the shape'],
    ['model with an empty segment', { ...valid, model: 'ocr//google' }, 'model: the subfeature segment'],
    ['model with upper case in the feature', { ...valid, model: 'OCR/ocr_async/google' }, 'model: the feature segment'],
    ['model with a space', { ...valid, model: 'ocr/ocr async/google' }, 'model: the subfeature segment'],
    ['model with an empty provider model', { ...valid, model: 'ocr/ocr_async/google/' }, 'model: the provider model segment'],
    ['input missing', { model: valid.model }, 'input is required'],
    ['input an array', { ...valid, input: [] }, 'input must be an object, got an array'],
    ['input a string', { ...valid, input: 'file' }, 'input must be an object, got a string'],
    ['input.file a number', { ...valid, input: { file: 5 } }, 'input.file must be a string'],
    ['input.file empty', { ...valid, input: { file: '' } }, 'input.file must be a string of 1 to 2048'],
    ['input.language a number', { ...valid, input: { file: 'x', language: 1 } }, 'input.language must be a string'],
    ['input.simulate an array', { ...valid, input: { simulate: [] } }, 'input.simulate must be an object'],
    [
      'input.simulate.outcome unknown',
      { ...valid, input: { simulate: { outcome: 'maybe' } } },
      'input.simulate.outcome must be "success" or "fail"',
    ],
    [
      'input.simulate.delay_ms negative',
      { ...valid, input: { simulate: { delay_ms: -1 } } },
      'input.simulate.delay_ms must be an integer from 0 to 600000',
    ],
    [
      'input.simulate.delay_ms too long',
      { ...valid, input: { simulate: { delay_ms: 600001 } } },
      'input.simulate.delay_ms must be an integer',
    ],
    [
      'input.simulate.delay_ms a float',
      { ...valid, input: { simulate: { delay_ms: '10.0' } } },
      'input.simulate.delay_ms must be an integer',
    ],
    ['input.simulate.output not an object', { ...valid, input: { simulate: { output: 'x' } } }, 'input.simulate.output must be an object'],
    [
      'input.simulate.output with fail',
      { ...valid, input: { simulate: { outcome: 'fail', output: {} } } },
      'input.simulate.output goes with outcome "success" only',
    ],
    [
      'input.simulate.error_code without fail',
      { ...valid, input: { simulate: { error_code: 'x' } } },
      'input.simulate.error_code goes with outcome "fail" only',
    ],
    [
      'input.simulate.error_code empty',
      { ...valid, input: { simulate: { outcome: 'fail', error_code: '' } } },
      'input.simulate.error_code must be a string',
    ],
    [
      'input.simulate unknown member',
      { ...valid, input: { simulate: { outcomes: 'fail' } } },
      'input.simulate.outcomes is not a known member',
    ],
    ['webhook_receiver a number', { ...valid, webhook_receiver: 1 }, 'webhook_receiver must be a URL string'],
    [
      'webhook_receiver too long',
      { ...valid, webhook_receiver: `https://a.test/${'x'.repeat(2100)}` },
      'webhook_receiver must be a URL string of at most 2048',
    ],
    ['webhook_receiver not a URL', { ...valid, webhook_receiver: 'not a url' }, 'webhook_receiver refused'],
    [
      'webhook_receiver http:// (insecure not allowed)',
      { ...valid, webhook_receiver: 'http://hooks.public.test/x' },
      'webhook_receiver refused',
    ],
    ['webhook_receiver on loopback', { ...valid, webhook_receiver: 'https://127.0.0.1/hooks' }, 'webhook_receiver refused'],
    [
      'webhook_receiver on the metadata address',
      { ...valid, webhook_receiver: 'https://169.254.169.254/latest' },
      'webhook_receiver refused',
    ],
    [
      'webhook_receiver resolving to a private address',
      { ...valid, webhook_receiver: 'https://hooks.internal.test/x' },
      'webhook_receiver refused',
    ],
    [
      'webhook_receiver with one private record among public ones',
      { ...valid, webhook_receiver: 'https://hooks.mixed.test/x' },
      'webhook_receiver refused',
    ],
    ['webhook_receiver not resolving', { ...valid, webhook_receiver: 'https://nowhere.invalid/x' }, 'webhook_receiver refused'],
    ['webhook_receiver with userinfo', { ...valid, webhook_receiver: 'https://user:pw@hooks.public.test/x' }, 'webhook_receiver refused'],
    [
      'user_webhook_parameters an array',
      { ...valid, user_webhook_parameters: [1] },
      'user_webhook_parameters must be an object, got an array',
    ],
    ['user_webhook_parameters a string', { ...valid, user_webhook_parameters: '{}' }, 'user_webhook_parameters must be an object'],
    ['show_original_response a string', { ...valid, show_original_response: 'true' }, 'show_original_response must be a boolean'],
  ];

  test.each(rows)('%s', async (_name, body, detail) => {
    // '10.0' rows are sent as JSON text with a float literal.
    const text = JSON.stringify(body).replace('"10.0"', '10.0');
    const { status, json } = await submit(text);
    expect(status).toBe(400);
    expect(Object.keys(json)).toEqual(['detail']);
    expect(json.detail).toContain(detail);
  });

  test('a refused request costs nothing', async () => {
    const before = (await sender.usage()).find((u) => u.masked.endsWith(TOKENS.uncapped.slice(-4)))!.requests;
    await submit({ ...valid, webhook_receiver: 'https://127.0.0.1/' });
    expect((await sender.usage()).find((u) => u.masked.endsWith(TOKENS.uncapped.slice(-4)))!.requests).toBe(before);
  });
});

describe('POST /v3/universal-ai/async: accepted forms (201)', () => {
  test('the minimal body, with file optional; the answer is the processing job', async () => {
    const { status, json, headers } = await submit({ model: 'text/summarize/openai', input: {} });
    expect(status).toBe(201);
    expect(json.job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(headers.location).toBe(`/v3/universal-ai/async/${String(json.job_id)}`);
    expect(json).toMatchObject({
      status: 'processing',
      feature: 'text',
      subfeature: 'summarize',
      provider: 'openai',
      model: null,
      finished_at: null,
    });
    expect(json.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
    expect(json).not.toHaveProperty('output');
    expect(json).not.toHaveProperty('cost');
  });

  test('a fourth model segment is the provider model', async () => {
    const { status, json } = await submit({
      model: 'audio/speech_to_text_async/deepgram/nova-3:general',
      input: { file: 'f', language: 'en' },
    });
    expect(status).toBe(201);
    expect(json.model).toBe('nova-3:general');
  });

  test('null optional fields mean "not given"; unknown top-level fields are ignored', async () => {
    const { status, json } = await submit({
      ...valid,
      webhook_receiver: null,
      user_webhook_parameters: null,
      show_original_response: null,
      priority: 'high',
    });
    expect(status).toBe(201);
    expect(json).not.toHaveProperty('webhook');
    expect(json).not.toHaveProperty('user_parameters');
    expect(json).not.toHaveProperty('priority');
  });

  test('a public https receiver passes the SSRF check and shows as pending', async () => {
    const { status, json } = await submit({ ...valid, webhook_receiver: 'https://hooks.public.test/jobs' });
    expect(status).toBe(201);
    expect(json.webhook).toEqual({ receiver: 'https://hooks.public.test/jobs', delivery: 'pending', round: 0 });
  });

  test('user_webhook_parameters keep 1.0, 2**70 and unicode exactly', async () => {
    const params = '{"f":1.0,"big":1180591620717411303424,"e":1e-07,"s":"é✓😀","n":[0.5,-0.0]}';
    const { status, text } = await submit(`{"model":"ocr/ocr_async/google","input":{"file":"x"},"user_webhook_parameters":${params}}`);
    expect(status).toBe(201);
    expect(text).toContain(`"user_parameters":${params}`);
  });
});

describe('request-level errors, each a {detail} body', () => {
  test('413 for a body over 1 MiB', async () => {
    const big = JSON.stringify({ ...valid, pad: 'x'.repeat(1024 * 1024) });
    const { status, json } = await submit(big);
    expect(status).toBe(413);
    expect(json.detail).toContain('larger than 1048576 bytes');
  });

  test('415 for a non-JSON content type, or a body without one', async () => {
    for (const headers of [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/json; charset=latin1' },
    ]) {
      const { status, json } = await submit(JSON.stringify(valid), headers);
      expect(status).toBe(415);
      expect(typeof json.detail).toBe('string');
    }
    const res = await sender.app.inject({ method: 'POST', url: '/v3/universal-ai/async', headers: auth });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ detail: 'the body must be a JSON object sent with Content-Type: application/json' });
  });

  test('400 for malformed JSON, a non-object body, an empty body', async () => {
    for (const [body, detail] of [
      ['{"model": ', 'malformed JSON body'],
      ["{'model': 1}", 'malformed JSON body'],
      ['[1,2]', 'the body must be a JSON object'],
      ['"text"', 'the body must be a JSON object'],
      ['', 'the body must be a JSON object; it was empty'],
    ] as const) {
      const { status, json } = await submit(body);
      expect(status, body).toBe(400);
      expect(json.detail).toContain(detail);
    }
  });

  test('404 for an unknown route or method, without auth', async () => {
    for (const [method, url] of [
      ['GET', '/v3/nothing'],
      ['GET', '/v2/universal-ai/async'],
      ['DELETE', '/v3/universal-ai/async'],
      ['GET', '/nothing'],
    ] as const) {
      const res = await sender.app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toEqual({ detail: `no route ${method} ${url}` });
    }
  });

  test('404 for a non-UUID or unknown job id', async () => {
    for (const id of ['nope', '123', '00000000-0000-4000-8000-000000000000', '%00']) {
      const res = await sender.app.inject({ method: 'GET', url: `/v3/universal-ai/async/${id}`, headers: auth });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ detail: 'job not found' });
    }
  });
});
