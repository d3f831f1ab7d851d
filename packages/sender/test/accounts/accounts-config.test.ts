import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobhookError } from '@jobhook/core';
import { afterAll, describe, expect, test } from 'vitest';
import { maskToken } from '../../src/accounts/api-token.js';
import { loadAccountsConfig, validateAccountsConfig, type AccountsConfig } from '../../src/index.js';
import { accountsFixture, TOKENS } from '../sender/sender-fixtures.js';

type Mutable = {
  organizations: { id: unknown; members: unknown[]; keys: Record<string, unknown>[]; [k: string]: unknown }[];
  [k: string]: unknown;
};

/** The fixture with one change to organizations[0].keys[0] (or to the whole document). */
function withKey(change: (key: Record<string, unknown>, doc: Mutable) => void): unknown {
  const doc = accountsFixture() as unknown as Mutable;
  change(doc.organizations[0]!.keys[0]!, doc);
  return doc;
}

function errorOf(fn: () => unknown): JobhookError {
  try {
    fn();
  } catch (err) {
    if (err instanceof JobhookError) return err;
    throw err;
  }
  throw new Error('expected a JobhookError');
}

const K0 = 'organizations[0].keys[0]';

describe('validateAccountsConfig: spec §2.1 rules at load', () => {
  test('the fixture passes and comes back normalized (defaults filled)', () => {
    const config = validateAccountsConfig(accountsFixture(), 'test');
    const legacy = config.organizations[0]!.keys[5]!;
    expect(legacy.id).toBeNull();
    const noScope = config.organizations[0]!.keys[7]!;
    expect(noScope.scopes).toEqual([]);
    expect(config.organizations[1]!.keys[0]!.active_balance).toBe(true);
  });

  const rejected: [string, (key: Record<string, unknown>, doc: Mutable) => void, string][] = [
    ['name of 201 characters', (k) => (k.name = 'n'.repeat(201)), `${K0}.name must have at most 200 characters, got 201`],
    ['name of 201 astral characters', (k) => (k.name = '😀'.repeat(201)), `${K0}.name must have at most 200 characters, got 201`],
    ['name not a string', (k) => (k.name = 7), `${K0}.name must be a string`],
    [
      'balance -100000 (exclusive bound)',
      (k) => (k.balance = -100000),
      `${K0}.balance must be strictly between -100000 and 100000, got -100000`,
    ],
    [
      'balance 100000 (exclusive bound)',
      (k) => (k.balance = 100000),
      `${K0}.balance must be strictly between -100000 and 100000, got 100000`,
    ],
    ['balance as a string', (k) => (k.balance = '10'), `${K0}.balance must be a number or null`],
    ['balance missing', (k) => delete k.balance, `${K0}.balance is required`],
    [
      'revoked without revoked_at',
      (k) => Object.assign(k, { revoked: true, revoked_at: null }),
      `${K0}.revoked_at is required when revoked is true`,
    ],
    [
      'revoked_at on a key not revoked',
      (k) => (k.revoked_at = '2025-01-01T00:00:00Z'),
      `${K0}.revoked_at must be null or absent when revoked is false`,
    ],
    [
      'revoked_at not a date-time',
      (k) => Object.assign(k, { revoked: true, revoked_at: 'yesterday' }),
      `${K0}.revoked_at must be an ISO 8601 date-time`,
    ],
    ['revoked not a boolean', (k) => (k.revoked = 'no'), `${K0}.revoked must be a boolean`],
    ['member not an email', (k) => (k.member = 'ada.acme.test'), `${K0}.member must be an email address`],
    [
      'member of another organization',
      (k) => (k.member = 'eve@globex.test'),
      `${K0}.member "eve@globex.test" is not a member of the organization`,
    ],
    ['id not a uuid', (k) => (k.id = 'key-1'), `${K0}.id must be a UUID or null`],
    ['id missing', (k) => delete k.id, `${K0}.id is required`],
    [
      'id used twice',
      (k, d) => (k.id = d.organizations[1]!.keys[0]!.id),
      'organizations[1].keys[0].id 88888888-8888-4888-8888-888888888888 is already the id of organizations[0].keys[0]',
    ],
    ['unknown token_type', (k) => (k.token_type = 'admin_token'), `${K0}.token_type must be "sandbox_api_token" or "api_token"`],
    ['token_type null', (k) => (k.token_type = null), `${K0}.token_type must be "sandbox_api_token" or "api_token"`],
    ['kind unknown', (k) => (k.kind = 'admin'), `${K0}.kind must be "inference" or "management"`],
    ['token too short', (k) => (k.token = 'short_token'), `${K0}.token must have 16 to 512 characters, got 11`],
    ['token with a space', (k) => (k.token = 'acme_inf_with space_12345'), `${K0}.token must consist of A-Z a-z 0-9`],
    [
      'token used twice',
      (k) => (k.token = TOKENS.globexInference),
      'organizations[1].keys[0].token is already the token of organizations[0].keys[0]',
    ],
    [
      'expire_time without a time',
      (k) => (k.expire_time = '2030-01-01'),
      `${K0}.expire_time must be an ISO 8601 date-time with a time zone`,
    ],
    [
      'expire_time without a zone',
      (k) => (k.expire_time = '2030-01-01T00:00:00'),
      `${K0}.expire_time must be an ISO 8601 date-time with a time zone`,
    ],
    ['expire_time on a day that does not exist', (k) => (k.expire_time = '2030-02-30T00:00:00Z'), `${K0}.expire_time must be an ISO 8601`],
    ['active_balance not a boolean', (k) => (k.active_balance = 1), `${K0}.active_balance must be a boolean`],
    ['a misspelt field', (k) => (k.balence = 5), `${K0}.balence is not a known field`],
    ['scopes on an inference key', (k) => (k.scopes = ['manage:read']), `${K0}.scopes apply to management keys only`],
    [
      'a malformed scope',
      (_k, d) => (d.organizations[0]!.keys[6]!.scopes = ['manage read']),
      'organizations[0].keys[6].scopes[0] must be a scope name',
    ],
    [
      'a member listed twice',
      (_k, d) => d.organizations[0]!.members.push('ada@acme.test'),
      'organizations[0].members[2] "ada@acme.test" is listed twice',
    ],
    [
      'a member that is not an email',
      (_k, d) => (d.organizations[0]!.members[1] = 'bob'),
      'organizations[0].members[1] must be an email address',
    ],
    [
      'two organizations with one id',
      (_k, d) => (d.organizations[1]!.id = 'acme'),
      'organizations[1].id "acme" is used by another organization',
    ],
    ['no organizations', (_k, d) => (d.organizations = []), 'organizations must hold at least one organization'],
    ['an unknown top-level field', (_k, d) => (d.orgs = []), 'orgs is not a known field'],
  ];

  test.each(rejected)('rejects %s', (_name, change, message) => {
    const err = errorOf(() => validateAccountsConfig(withKey(change), 'accounts.json'));
    expect(err.code).toBe('ERR_OPTION_INVALID');
    expect(err.message).toContain(`accounts.json: ${message}`);
    // A secret never appears in an error message.
    for (const token of Object.values(TOKENS)) expect(err.message).not.toContain(token);
  });

  const accepted: [string, (key: Record<string, unknown>) => void][] = [
    ['name of exactly 200 characters', (k) => (k.name = 'n'.repeat(200))],
    ['name of 200 astral characters (400 UTF-16 units)', (k) => (k.name = '😀'.repeat(200))],
    ['an empty name', (k) => (k.name = '')],
    ['balance just above -100000', (k) => (k.balance = -99999.99)],
    ['balance just below 100000', (k) => (k.balance = 99999.99)],
    ['balance null (no cap)', (k) => (k.balance = null)],
    ['revoked with revoked_at (offset form)', (k) => Object.assign(k, { revoked: true, revoked_at: '2025-06-01T14:00:00.250+02:00' })],
    ['no token_type', (k) => delete k.token_type],
    ['expire_time absent', (k) => delete k.expire_time],
    ['an upper-case uuid', (k) => (k.id = 'ABCDEF01-2345-4678-9ABC-DEF012345678')],
  ];

  test.each(accepted)('accepts %s', (_name, change) => {
    expect(() => validateAccountsConfig(withKey(change), 'accounts.json')).not.toThrow();
  });
});

describe('loadAccountsConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-accounts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('reads a valid file', async () => {
    const file = join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify(accountsFixture()));
    const config: AccountsConfig = await loadAccountsConfig(file);
    expect(config.organizations.map((o) => o.id)).toEqual(['acme', 'globex']);
  });

  test('names the file and the field path of a broken rule', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(withKey((k) => (k.name = 'x'.repeat(201)))));
    await expect(loadAccountsConfig(file)).rejects.toThrow(`${file}: ${K0}.name must have at most 200 characters, got 201`);
  });

  test('names the file when it is not JSON or missing', async () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{"organizations": [');
    await expect(loadAccountsConfig(file)).rejects.toThrow(`${file}: not JSON`);
    await expect(loadAccountsConfig(join(dir, 'missing.json'))).rejects.toThrow('cannot read the accounts file');
  });
});

describe('maskToken', () => {
  test.each([
    ['jh_inf_Zk3p9QwErTy0uIoPaSdFgHjKl4b2', 'jh_inf_…l4b2'],
    ['jh_mgmt_Zk3p9QwErTy0uIoPaSdFgHjKl4b2', 'jh_mgmt_…l4b2'],
    ['sk-abcdefghijklmnopqrst', 'sk-…qrst'],
    ['abcdefghijklmnopqrst', '…qrst'],
    // A prefix that would leave fewer than 8 characters hidden is not shown.
    ['jh_inf_abcdefghijk', '…hijk'],
  ])('%s → %s', (token, masked) => {
    expect(maskToken(token)).toBe(masked);
  });
});
