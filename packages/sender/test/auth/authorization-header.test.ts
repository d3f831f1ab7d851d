// The bearer contract over a real listening server: raw sockets for header forms fetch will not
// send (tabs, duplicates, odd casing kept byte for byte), fetch for the status codes of spec §7.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { bearer, KEY_IDS, rawRequest, startTestSender, TOKENS } from '../sender/sender-fixtures.js';

let sender: Sender;
let baseUrl: string;

beforeAll(async () => {
  ({ sender, baseUrl } = await startTestSender());
});
afterAll(async () => {
  await sender.close();
});

const T = TOKENS.uncapped;
const CHAT = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

/** A chat completion request with these raw header lines (each without CRLF), sent byte for byte. */
function chatWith(...authLines: string[]): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const head = ['POST /v3/llm/chat/completions HTTP/1.1', 'Content-Type: application/json', ...authLines].join('\r\n');
  return rawRequest(baseUrl, head, CHAT);
}

describe('Authorization header forms over a raw socket (POST /v3/llm/chat/completions)', () => {
  test('the valid form is answered 200', async () => {
    const answer = await chatWith(`Authorization: Bearer ${T}`);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).object).toBe('chat.completion');
  });

  const malformed: [string, string[]][] = [
    ['scheme in lower case', [`Authorization: bearer ${T}`]],
    ['scheme in upper case', [`Authorization: BEARER ${T}`]],
    ['scheme without token', ['Authorization: Bearer']],
    // Over the wire the trailing space is optional whitespace (RFC 9110 §5.5): this is "Bearer".
    ['scheme and a trailing space', ['Authorization: Bearer ']],
    ['two spaces', [`Authorization: Bearer  ${T}`]],
    ['a tab instead of the space', [`Authorization: Bearer\t${T}`]],
    ['a second word', [`Authorization: Bearer ${T} extra`]],
    ['a quoted token', [`Authorization: Bearer "${T}"`]],
    ['Basic scheme', [`Authorization: Basic ${T}`]],
    ['Token scheme', [`Authorization: Token ${T}`]],
    ['two Authorization headers, both valid', [`Authorization: Bearer ${T}`, `Authorization: Bearer ${T}`]],
    ['two Authorization headers, second valid', ['Authorization: Bearer nope_nope_nope_nope', `authorization: Bearer ${T}`]],
    ['comma-joined values', [`Authorization: Bearer ${T},Bearer ${T}`]],
    ['an empty header', ['Authorization:']],
    ['no header at all', []],
    ['the token in another case', [`Authorization: Bearer ${T.toUpperCase()}`]],
    ['the token with one character less', [`Authorization: Bearer ${T.slice(0, -1)}`]],
    ['a well-formed unknown token', ['Authorization: Bearer acme_inf_doesNotExist000000']],
    ['a colon instead of the space', [`Authorization: Bearer:${T}`]],
    ['a semicolon after the token', [`Authorization: Bearer ${T};`]],
    ['non-ASCII bytes in the token', ['Authorization: Bearer t\u00f6k\u00e9n_t\u00f6k\u00e9n_t\u00f6k\u00e9n']],
    ['the token in Proxy-Authorization instead', [`Proxy-Authorization: Bearer ${T}`]],
    ['the token in X-Api-Key instead', [`X-Api-Key: ${T}`]],
  ];

  test.each(malformed)('%s → 401 {detail} with WWW-Authenticate: Bearer', async (_name, lines) => {
    const answer = await chatWith(...lines);
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer realm="jobhook"/);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(answer.body) as { detail: unknown };
    expect(Object.keys(body)).toEqual(['detail']);
    expect(typeof body.detail).toBe('string');
  });

  test('a missing header gets no error code in WWW-Authenticate; a malformed one gets invalid_request (RFC 6750 §3.1)', async () => {
    expect((await chatWith()).headers['www-authenticate']).toBe('Bearer realm="jobhook"');
    expect((await chatWith(`Authorization: bearer ${T}`)).headers['www-authenticate']).toBe(
      'Bearer realm="jobhook", error="invalid_request"',
    );
    expect((await chatWith('Authorization: Bearer acme_inf_doesNotExist000000')).headers['www-authenticate']).toBe(
      'Bearer realm="jobhook", error="invalid_token"',
    );
  });

  test('leading and trailing whitespace of the line is not part of the value (RFC 9110 §5.5): Node strips it, so it is the valid form', async () => {
    expect((await chatWith(`Authorization:   Bearer ${T}   `)).status).toBe(200);
    expect((await chatWith(`Authorization:\tBearer ${T}\t`)).status).toBe(200);
  });

  test('CR or LF inside the value never reaches a route: Node refuses the request, answered 400 {detail}', async () => {
    for (const line of [`Authorization: Bearer ${T}\rx`, `Authorization: Bearer\r\n ${T}`]) {
      const answer = await chatWith(line);
      expect(answer.status).toBe(400);
      expect(typeof (JSON.parse(answer.body) as { detail: unknown }).detail).toBe('string');
    }
  });
});

async function detailOf(res: Response): Promise<string> {
  const body = (await res.json()) as { detail: unknown };
  expect(typeof body.detail).toBe('string');
  return body.detail as string;
}

describe('status codes of spec §7 (fetch)', () => {
  const chat = (headers: Record<string, string>) =>
    fetch(`${baseUrl}/v3/llm/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: CHAT,
    });

  test('401 missing, invalid, malformed, revoked, expired', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'missing Authorization header'],
      [bearer('acme_inf_doesNotExist000000'), 'invalid API key'],
      [{ authorization: `Token ${T}` }, 'malformed Authorization header'],
      [bearer(TOKENS.revoked), 'revoked at 2025-06-01T12:00:00Z'],
      [bearer(TOKENS.expired), 'expired at 2020-01-01T00:00:00Z'],
    ];
    for (const [headers, detail] of cases) {
      const res = await chat(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await detailOf(res)).toContain(detail);
    }
  });

  test('a key expires at its expire_time (injected clock)', async () => {
    const { sender: timed, baseUrl: timedUrl } = await startTestSender({ now: () => new Date('2019-12-31T23:59:59Z') });
    try {
      const ok = await fetch(`${timedUrl}/v3/llm/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(TOKENS.expired), 'content-type': 'application/json' },
        body: CHAT,
      });
      expect(ok.status).toBe(200);
    } finally {
      await timed.close();
    }
  });

  test('management endpoints refuse inference keys (401); inference endpoints refuse management keys (401)', async () => {
    const manage = await fetch(`${baseUrl}/v3/manage/keys/${KEY_IDS.inference}/`, { headers: bearer(TOKENS.inference) });
    expect(manage.status).toBe(401);
    expect(await detailOf(manage)).toContain('management endpoints accept only management keys');
    const infer = await chat(bearer(TOKENS.management));
    expect(infer.status).toBe(401);
    expect(await detailOf(infer)).toContain('management keys are rejected');
    const poll = await fetch(`${baseUrl}/v3/universal-ai/async/${KEY_IDS.inference}`, { headers: bearer(TOKENS.management) });
    expect(poll.status).toBe(401);
  });

  test('a management key without manage:read gets 403 with insufficient_scope', async () => {
    const res = await fetch(`${baseUrl}/v3/manage/keys/${KEY_IDS.inference}/`, { headers: bearer(TOKENS.managementNoScope) });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="jobhook", error="insufficient_scope", scope="manage:read"');
    expect(await detailOf(res)).toContain('lacks the scope manage:read');
  });

  test('a legacy key (id null) still authenticates', async () => {
    expect((await chat(bearer(TOKENS.legacy))).status).toBe(200);
  });

  test('auth runs before the body is read: an unauthenticated oversized body gets 401, not 413', async () => {
    const res = await fetch(`${baseUrl}/v3/universal-ai/async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(res.status).toBe(401);
  });
});
