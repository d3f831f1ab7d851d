import { optionError } from '@jobhook/core/internal';
import type { AccountsConfig, KeyConfig, OrganizationConfig } from './accounts-config.js';
import { tokenProblem } from './api-token.js';
import { parseDateTime } from './date-time.js';

/** Longest key `name` (spec §2.1, §8), in characters (code points, as Python's `len`). */
export const MAX_KEY_NAME_LENGTH = 200;
/** `balance` must be strictly greater than this (spec §2.1, §8). */
export const MIN_BALANCE_EXCLUSIVE = -100_000;
/** `balance` must be strictly less than this (spec §2.1, §8). */
export const MAX_BALANCE_EXCLUSIVE = 100_000;

/** A UUID in its canonical 8-4-4-4-12 hex form (any version; matched case-insensitively). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A pragmatic email check: one `@`, no spaces, a dot in the domain, at most 254 characters. */
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
/** Scope names look like `manage:read`. */
const SCOPE = /^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$/;

const KEY_FIELDS = new Set([
  'id',
  'token',
  'kind',
  'name',
  'member',
  'token_type',
  'scopes',
  'active_balance',
  'balance',
  'expire_time',
  'revoked',
  'revoked_at',
]);
const ORG_FIELDS = new Set(['id', 'name', 'members', 'keys']);

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks an accounts configuration against the rules of spec §2.1 and returns a normalized copy
 * (absent optional fields filled with their defaults). `source` starts every error message, e.g. the
 * file path, and the message goes on with the path of the bad field:
 * `accounts.json: organizations[0].keys[1].name must have at most 200 characters, got 201`.
 *
 * Rules beyond §2.1: `id`s and `token`s unique across all organizations, member emails unique
 * within an organization, `member` one of them, unknown fields refused (a typo would otherwise
 * silently drop a rule), `scopes` only on management keys.
 *
 * @throws JobhookError `ERR_OPTION_INVALID`
 */
export function validateAccountsConfig(value: unknown, source: string): AccountsConfig {
  const fail = (path: string, message: string): never => {
    throw optionError(source, `${path} ${message}`, { detail: { path } });
  };
  if (!isPlainObject(value)) fail('the configuration', `must be an object { "organizations": [...] }, got ${describe(value)}`);
  const root = value as Record<string, unknown>;
  for (const field of Object.keys(root)) {
    if (field !== 'organizations') fail(field, 'is not a known field (expected only "organizations")');
  }
  if (!Array.isArray(root.organizations)) fail('organizations', `must be an array, got ${describe(root.organizations)}`);
  const orgsIn = root.organizations as unknown[];
  if (orgsIn.length === 0) fail('organizations', 'must hold at least one organization');

  const orgIds = new Set<string>();
  const keyIds = new Map<string, string>();
  const tokens = new Map<string, string>();
  const organizations: OrganizationConfig[] = orgsIn.map((orgIn, o) => {
    const at = `organizations[${o}]`;
    if (!isPlainObject(orgIn)) fail(at, `must be an object, got ${describe(orgIn)}`);
    const org = orgIn as Record<string, unknown>;
    for (const field of Object.keys(org)) {
      if (!ORG_FIELDS.has(field)) fail(`${at}.${field}`, 'is not a known field (expected id, name, members, keys)');
    }
    if (typeof org.id !== 'string' || org.id.length === 0 || org.id.length > 200) {
      fail(`${at}.id`, `must be a string of 1 to 200 characters, got ${describe(org.id)}`);
    }
    const id = org.id as string;
    if (orgIds.has(id)) fail(`${at}.id`, `${JSON.stringify(id)} is used by another organization`);
    orgIds.add(id);
    if (org.name !== undefined && typeof org.name !== 'string') fail(`${at}.name`, `must be a string, got ${describe(org.name)}`);

    if (!Array.isArray(org.members)) fail(`${at}.members`, `must be an array of emails, got ${describe(org.members)}`);
    const members = new Set<string>();
    (org.members as unknown[]).forEach((email, m) => {
      if (typeof email !== 'string' || email.length > 254 || !EMAIL.test(email)) {
        fail(`${at}.members[${m}]`, `must be an email address, got ${describe(email)}`);
      }
      const e = email as string;
      if (members.has(e)) fail(`${at}.members[${m}]`, `${JSON.stringify(e)} is listed twice`);
      members.add(e);
    });

    if (!Array.isArray(org.keys)) fail(`${at}.keys`, `must be an array, got ${describe(org.keys)}`);
    const keys = (org.keys as unknown[]).map((keyIn, k) => {
      const kat = `${at}.keys[${k}]`;
      const key = validateKey(keyIn, kat, members, fail);
      if (key.id !== null) {
        const other = keyIds.get(key.id.toLowerCase());
        if (other !== undefined) fail(`${kat}.id`, `${key.id} is already the id of ${other}`);
        keyIds.set(key.id.toLowerCase(), kat);
      }
      const other = tokens.get(key.token);
      if (other !== undefined) fail(`${kat}.token`, `is already the token of ${other}`);
      tokens.set(key.token, kat);
      return key;
    });
    return { id, ...(org.name === undefined ? {} : { name: org.name as string }), members: [...members], keys };
  });
  return { organizations };
}

function validateKey(keyIn: unknown, at: string, members: ReadonlySet<string>, fail: (path: string, message: string) => never): KeyConfig {
  if (!isPlainObject(keyIn)) fail(at, `must be an object, got ${describe(keyIn)}`);
  const key = keyIn as Record<string, unknown>;
  for (const field of Object.keys(key)) {
    if (!KEY_FIELDS.has(field)) fail(`${at}.${field}`, `is not a known field (expected ${[...KEY_FIELDS].join(', ')})`);
  }
  const required = ['id', 'token', 'kind', 'name', 'member', 'balance', 'revoked'] as const;
  for (const field of required) {
    if (!(field in key)) fail(`${at}.${field}`, 'is required');
  }

  const { id, token, kind, name, member, balance, revoked } = key;
  if (id !== null && (typeof id !== 'string' || !UUID_PATTERN.test(id))) {
    fail(`${at}.id`, `must be a UUID or null (a legacy key), got ${describe(id)}`);
  }
  const bad = tokenProblem(token);
  // The token itself never goes into a message: it is a secret.
  if (bad !== undefined) fail(`${at}.token`, bad);
  if (kind !== 'inference' && kind !== 'management') fail(`${at}.kind`, `must be "inference" or "management", got ${describe(kind)}`);
  if (typeof name !== 'string') fail(`${at}.name`, `must be a string, got ${describe(name)}`);
  const nameLength = [...(name as string)].length;
  if (nameLength > MAX_KEY_NAME_LENGTH) fail(`${at}.name`, `must have at most ${MAX_KEY_NAME_LENGTH} characters, got ${nameLength}`);
  if (typeof member !== 'string' || !EMAIL.test(member)) fail(`${at}.member`, `must be an email address, got ${describe(member)}`);
  if (!members.has(member as string)) fail(`${at}.member`, `${JSON.stringify(member)} is not a member of the organization`);

  const tokenType = key.token_type;
  if (tokenType !== undefined && tokenType !== 'sandbox_api_token' && tokenType !== 'api_token') {
    fail(`${at}.token_type`, `must be "sandbox_api_token" or "api_token" when given, got ${describe(tokenType)}`);
  }

  let scopes: string[] = [];
  if (key.scopes !== undefined) {
    if (!Array.isArray(key.scopes)) fail(`${at}.scopes`, `must be an array of scope names, got ${describe(key.scopes)}`);
    scopes = (key.scopes as unknown[]).map((scope, s) => {
      if (typeof scope !== 'string' || !SCOPE.test(scope))
        fail(`${at}.scopes[${s}]`, `must be a scope name such as "manage:read", got ${describe(scope)}`);
      return scope as string;
    });
    if (kind === 'inference' && scopes.length > 0) fail(`${at}.scopes`, 'apply to management keys only');
  }

  const activeBalance = key.active_balance ?? false;
  if (typeof activeBalance !== 'boolean') fail(`${at}.active_balance`, `must be a boolean, got ${describe(activeBalance)}`);
  if (balance !== null) {
    if (typeof balance !== 'number' || !Number.isFinite(balance))
      fail(`${at}.balance`, `must be a number or null, got ${describe(balance)}`);
    const b = balance as number;
    if (!(b > MIN_BALANCE_EXCLUSIVE && b < MAX_BALANCE_EXCLUSIVE)) {
      fail(`${at}.balance`, `must be strictly between ${MIN_BALANCE_EXCLUSIVE} and ${MAX_BALANCE_EXCLUSIVE}, got ${b}`);
    }
  }

  const expireTime = key.expire_time ?? null;
  if (expireTime !== null && (typeof expireTime !== 'string' || parseDateTime(expireTime) === undefined)) {
    fail(
      `${at}.expire_time`,
      `must be an ISO 8601 date-time with a time zone (e.g. 2026-12-31T23:59:59Z) or null, got ${describe(expireTime)}`,
    );
  }
  if (typeof revoked !== 'boolean') fail(`${at}.revoked`, `must be a boolean, got ${describe(revoked)}`);
  const revokedAt = key.revoked_at ?? null;
  if (revokedAt !== null && (typeof revokedAt !== 'string' || parseDateTime(revokedAt) === undefined)) {
    fail(`${at}.revoked_at`, `must be an ISO 8601 date-time with a time zone or null, got ${describe(revokedAt)}`);
  }
  if (revoked === true && revokedAt === null) fail(`${at}.revoked_at`, 'is required when revoked is true');
  if (revoked === false && revokedAt !== null) fail(`${at}.revoked_at`, 'must be null or absent when revoked is false');

  return {
    id: id as string | null,
    token: token as string,
    kind: kind as KeyConfig['kind'],
    name: name as string,
    member: member as string,
    ...(tokenType === undefined ? {} : { token_type: tokenType as KeyConfig['token_type'] & string }),
    scopes,
    active_balance: activeBalance as boolean,
    balance: balance as number | null,
    expire_time: expireTime as string | null,
    revoked: revoked as boolean,
    revoked_at: revokedAt as string | null,
  } as KeyConfig;
}
