import { createHash, randomUUID } from 'node:crypto';
import { JobhookError } from '@jobhook/core';
import type { AccountsConfig, KeyConfig, KeyKind, TokenType } from './accounts-config.js';
import { maskToken, tokenProblem } from './api-token.js';
import { DEV_BALANCE } from './dev-accounts.js';
import { parseDateTime } from './date-time.js';
import { addCredits } from './pricing.js';

/** A key as the running service holds it: everything but the secret, which is only kept hashed. */
export interface ApiKey {
  readonly id: string | null;
  readonly organizationId: string;
  readonly kind: KeyKind;
  readonly name: string;
  readonly member: string;
  readonly tokenType: TokenType | undefined;
  readonly scopes: ReadonlySet<string>;
  readonly masked: string;
  readonly activeBalance: boolean;
  /** Mutable: lowered by each charge when `activeBalance`. */
  balance: number | null;
  readonly expireTime: string | null;
  /** `expireTime` in ms since the epoch. */
  readonly expiresAtMs: number | null;
  readonly revoked: boolean;
  readonly revokedAt: string | null;
  /** Charged requests and their total, for billing. */
  readonly usage: { requests: number; spent: number };
}

/** The ManagementKey object of spec §2.1, as `GET /v3/manage/keys/{key_id}/` answers it. */
export interface ManagementKeyView {
  id: string | null;
  name: string;
  token_type?: TokenType;
  member: string;
  masked: string;
  active_balance: boolean;
  balance: number | null;
  expire_time: string | null;
  revoked: boolean;
  revoked_at: string | null;
}

/** Usage of one key since the sender started. */
export interface KeyUsage {
  keyId: string | null;
  organizationId: string;
  name: string;
  masked: string;
  /** Charged requests (jobs and chat completions). */
  requests: number;
  /** Credits charged, summed. */
  spent: number;
  /** Current balance (null: no cap). */
  balance: number | null;
}

/** Result of {@link AccountRegistry.charge}. */
export type ChargeResult = { ok: true } | { ok: false; detail: string };

/** Organizations, keys and credits of a running sender (in this process's memory). */
export interface AccountRegistry {
  /** The key whose secret is `token`, or undefined. Looked up by SHA-256, so no secret is compared character by character. */
  findByToken(token: string): ApiKey | undefined;
  /** The key `keyId` of `organizationId`; undefined for another organization's key, an unknown id, or a legacy key. */
  findById(organizationId: string, keyId: string): ApiKey | undefined;
  /**
   * Takes `price` from the key's balance when `active_balance` is set and `balance` is a number;
   * refuses when the balance is below the price (the balance never goes below 0 through charges).
   * Keys without a cap are only counted.
   */
  charge(key: ApiKey, price: string): ChargeResult;
  /** Gives back a charge whose request then failed on the service's side. */
  refund(key: ApiKey, price: string): void;
  /** Every key's usage, in configuration order. */
  usage(): KeyUsage[];
}

const sha256 = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The ManagementKey view of a key (never the secret). */
export function managementKeyView(key: ApiKey): ManagementKeyView {
  return {
    id: key.id,
    name: key.name,
    ...(key.tokenType === undefined ? {} : { token_type: key.tokenType }),
    member: key.member,
    masked: key.masked,
    active_balance: key.activeBalance,
    balance: key.balance,
    expire_time: key.expireTime,
    revoked: key.revoked,
    revoked_at: key.revokedAt,
  };
}

function toApiKey(config: KeyConfig, organizationId: string): ApiKey {
  const expireTime = config.expire_time ?? null;
  return {
    id: config.id === null ? null : config.id.toLowerCase(),
    organizationId,
    kind: config.kind,
    name: config.name,
    member: config.member,
    tokenType: config.token_type,
    scopes: new Set(config.scopes ?? []),
    masked: maskToken(config.token),
    activeBalance: config.active_balance ?? false,
    balance: config.balance,
    expireTime,
    expiresAtMs: expireTime === null ? null : (parseDateTime(expireTime) ?? null),
    revoked: config.revoked,
    revokedAt: config.revoked_at ?? null,
    usage: { requests: 0, spent: 0 },
  };
}

/**
 * Builds the registry from validated accounts. `apiKeys` are extra inference tokens (the CLI's
 * `--api-key`), each added to the first organization as a capped key with {@link DEV_BALANCE}
 * credits and owned by its first member.
 *
 * @throws JobhookError `ERR_OPTION_INVALID` for an unusable or duplicate api key.
 */
export function createAccountRegistry(accounts: AccountsConfig, apiKeys: readonly string[] = []): AccountRegistry {
  const byHash = new Map<string, ApiKey>();
  const byId = new Map<string, ApiKey>();
  const all: ApiKey[] = [];
  const add = (config: KeyConfig, organizationId: string): void => {
    const key = toApiKey(config, organizationId);
    byHash.set(sha256(config.token), key);
    if (key.id !== null) byId.set(key.id, key);
    all.push(key);
  };
  for (const org of accounts.organizations) {
    for (const key of org.keys) add(key, org.id);
  }
  const first = accounts.organizations[0];
  apiKeys.forEach((token, i) => {
    const problem = tokenProblem(token);
    if (problem !== undefined) throw new JobhookError('ERR_OPTION_INVALID', `createSender: apiKeys[${i}] ${problem}`);
    if (byHash.has(sha256(token))) throw new JobhookError('ERR_OPTION_INVALID', `createSender: apiKeys[${i}] is already the token of another key`);
    const member = first?.members[0];
    if (first === undefined || member === undefined) {
      throw new JobhookError('ERR_OPTION_INVALID', 'createSender: apiKeys need an organization with at least one member');
    }
    add(
      {
        id: randomUUID(),
        token,
        kind: 'inference',
        name: `api key ${i + 1}`,
        member,
        scopes: [],
        active_balance: true,
        balance: DEV_BALANCE,
        expire_time: null,
        revoked: false,
        revoked_at: null,
      },
      first.id,
    );
  });

  return {
    findByToken(token) {
      return byHash.get(sha256(token));
    },
    findById(organizationId, keyId) {
      const key = byId.get(keyId.toLowerCase());
      return key !== undefined && key.organizationId === organizationId ? key : undefined;
    },
    charge(key, price) {
      const amount = Number(price);
      if (key.activeBalance && key.balance !== null) {
        if (key.balance < amount) {
          return { ok: false, detail: `insufficient credits: this request costs ${price}, the key's balance is ${key.balance}` };
        }
        key.balance = addCredits(key.balance, -amount);
      }
      key.usage.requests += 1;
      key.usage.spent = addCredits(key.usage.spent, amount);
      return { ok: true };
    },
    refund(key, price) {
      const amount = Number(price);
      if (key.activeBalance && key.balance !== null) key.balance = addCredits(key.balance, amount);
      key.usage.requests -= 1;
      key.usage.spent = addCredits(key.usage.spent, -amount);
    },
    usage() {
      return all.map((key) => ({
        keyId: key.id,
        organizationId: key.organizationId,
        name: key.name,
        masked: key.masked,
        requests: key.usage.requests,
        spent: key.usage.spent,
        balance: key.balance,
      }));
    },
  };
}
