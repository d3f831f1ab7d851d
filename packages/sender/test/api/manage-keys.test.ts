// GET /v3/manage/keys/{key_id}/ (spec §4.1, §2.1) over a real listening server.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { bearer, KEY_IDS, startTestSender, submitJob, TOKENS } from '../sender/sender-fixtures.js';

let sender: Sender;
let baseUrl: string;

beforeAll(async () => {
  ({ sender, baseUrl } = await startTestSender());
});
afterAll(async () => {
  await sender.close();
});

async function getKey(keyId: string, token: string = TOKENS.management, slash = '/') {
  const res = await fetch(`${baseUrl}/v3/manage/keys/${keyId}${slash}`, { headers: bearer(token) });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

const FIELDS = ['id', 'name', 'token_type', 'member', 'masked', 'active_balance', 'balance', 'expire_time', 'revoked', 'revoked_at'];

describe('GET /v3/manage/keys/{key_id}/', () => {
  test('answers the ManagementKey of §2.1, exactly these fields', async () => {
    const { status, json } = await getKey(KEY_IDS.inference);
    expect(status).toBe(200);
    expect(json).toEqual({
      id: KEY_IDS.inference,
      name: 'backend',
      token_type: 'api_token',
      member: 'ada@acme.test',
      masked: `acme_inf_…${TOKENS.inference.slice(-4)}`,
      active_balance: true,
      balance: 1000,
      expire_time: null,
      revoked: false,
      revoked_at: null,
    });
    expect(Object.keys(json).sort()).toEqual([...FIELDS].sort());
  });

  test('never carries a secret: no token field, no token text anywhere in any answer', async () => {
    for (const id of Object.values(KEY_IDS).filter((id) => !id.startsWith('8') && !id.startsWith('9'))) {
      const { status, text, json } = await getKey(id);
      expect(status).toBe(200);
      expect(json).not.toHaveProperty('token');
      for (const token of Object.values(TOKENS)) {
        expect(text).not.toContain(token);
        // Not even the hidden middle: the masked form shows a prefix and the last 4 characters only.
        expect(text).not.toContain(token.slice(-12, -4));
      }
      expect(json.masked).toMatch(/^[a-z_]*…[A-Za-z0-9]{4}$/);
    }
  });

  test('a revoked key stays readable with revoked: true and revoked_at', async () => {
    const { status, json } = await getKey(KEY_IDS.revoked);
    expect(status).toBe(200);
    expect(json).toMatchObject({ revoked: true, revoked_at: '2025-06-01T12:00:00Z' });
  });

  test('expire_time, null balance, no token_type when unset, active_balance false', async () => {
    expect((await getKey(KEY_IDS.expired)).json.expire_time).toBe('2020-01-01T00:00:00Z');
    const uncapped = (await getKey(KEY_IDS.uncapped)).json;
    expect(uncapped).toMatchObject({ balance: null, active_balance: false, member: 'bob@acme.test' });
    expect(uncapped).not.toHaveProperty('token_type');
  });

  test('a key can read itself; the path works without the trailing slash and with an upper-case id', async () => {
    const self = await getKey(KEY_IDS.management);
    expect(self.json).toMatchObject({ id: KEY_IDS.management, token_type: 'sandbox_api_token', balance: null });
    expect((await getKey(KEY_IDS.inference, TOKENS.management, '')).json).toEqual((await getKey(KEY_IDS.inference)).json);
    expect((await getKey(KEY_IDS.inference.toUpperCase())).status).toBe(200);
  });

  test('404 {detail} for another organization key, an unknown id, a non-UUID id, a legacy key', async () => {
    const cases = [
      KEY_IDS.globexInference, // another organization's key
      KEY_IDS.globexManagement,
      '12345678-1234-4234-8234-123456789abc', // unknown
      'backend', // not a uuid
      'null', // the legacy key's id is null: never addressable
      '1111111-1111-4111-8111-111111111111',
    ];
    for (const id of cases) {
      const { status, json } = await getKey(id);
      expect(status, id).toBe(404);
      expect(json, id).toEqual({ detail: 'key not found' });
    }
    // And the other way round.
    expect((await getKey(KEY_IDS.inference, TOKENS.globexManagement)).status).toBe(404);
    expect((await getKey(KEY_IDS.globexInference, TOKENS.globexManagement)).status).toBe(200);
  });

  test('balance shows credits spent by jobs', async () => {
    const before = (await getKey(KEY_IDS.inference)).json.balance as number;
    const submitted = await submitJob(baseUrl, TOKENS.inference, { model: 'ocr/ocr_async/google', input: { file: 'x' } });
    expect(submitted.status).toBe(201);
    expect((await getKey(KEY_IDS.inference)).json.balance).toBe(before - 0.03);
  });
});
