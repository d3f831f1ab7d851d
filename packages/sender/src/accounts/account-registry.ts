import { createHash, randomUUID } from 'node:crypto';
import { optionError } from '@jobhook/core/internal';
import type { AccountsConfig, KeyConfig, KeyKind, TokenType } from './accounts-config.js';
import { maskToken } from './api-token.js';
import type { ChargeResult, CreditLedger, LedgerAccount } from './credit-ledger.js';
import { DEV_BALANCE } from './dev-accounts.js';
import { parseDateTime } from './date-time.js';

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
  /** The balance in the accounts file. The current one is in the ledger when charges are capped ({@link ApiKey.account}). */
  readonly configBalance: number | null;
  /** The key's account in the credit ledger: capped when `activeBalance` and the balance is a number. */
  readonly account: LedgerAccount;
  readonly expireTime: string | null;
  /** `expireTime` in ms since the epoch. */
  readonly expiresAtMs: number | null;
  readonly revoked: boolean;
  readonly revokedAt: string | null;
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

/** Usage of one key: since the sender started, or, on Redis, since its balance was first used. */
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

export type { ChargeResult } from './credit-ledger.js';

/** Organizations and keys of a running sender (from its accounts), their credits in a {@link CreditLedger}. */
export interface AccountRegistry extends Omit<AccountKeys, 'all'> {
  /**
   * Takes `price` from the key's balance when `active_balance` is set and `balance` is a number;
   * refuses when the balance is below the price (the balance never goes below 0 through charges).
   * Keys without a cap are only counted.
   * @throws JobhookError `ERR_STORE_UNAVAILABLE` when the ledger is on Redis and Redis fails.
   */
  charge(key: ApiKey, price: string): Promise<ChargeResult>;
  /** Gives back a charge whose request then failed on the service's side. */
  refund(key: ApiKey, price: string): Promise<void>;
  /** The ManagementKey view of a key, with its current balance. */
  managementView(key: ApiKey): Promise<ManagementKeyView>;
  /** Every key's usage, in configuration order. */
  usage(): Promise<KeyUsage[]>;
}

const sha256 = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The ManagementKey view of a key (never the secret), with `balance` as given. */
function managementKeyView(key: ApiKey, balance: number | null): ManagementKeyView {
  return {
    id: key.id,
    name: key.name,
    ...(key.tokenType === undefined ? {} : { token_type: key.tokenType }),
    member: key.member,
    masked: key.masked,
    active_balance: key.activeBalance,
    balance,
    expire_time: key.expireTime,
    revoked: key.revoked,
    revoked_at: key.revokedAt,
  };
}

function toApiKey(config: KeyConfig, organizationId: string, ledgerRef: string): ApiKey {
  const expireTime = config.expire_time ?? null;
  const id = config.id === null ? null : config.id.toLowerCase();
  const activeBalance = config.active_balance ?? false;
  return {
    id,
    organizationId,
    kind: config.kind,
    name: config.name,
    member: config.member,
    tokenType: config.token_type,
    scopes: new Set(config.scopes ?? []),
    masked: maskToken(config.token),
    activeBalance,
    configBalance: config.balance,
    account: { ref: ledgerRef, cap: activeBalance ? config.balance : null },
    expireTime,
    expiresAtMs: expireTime === null ? null : (parseDateTime(expireTime) ?? null),
    revoked: config.revoked,
    revokedAt: config.revoked_at ?? null,
  };
}

/** The keys of a running sender, found by token or id. */
export interface AccountKeys {
  /** The key whose secret is `token`, or undefined. Looked up by SHA-256, so no secret is compared character by character. */
  findByToken(token: string): ApiKey | undefined;
  /** The key `keyId` of `organizationId`; undefined for another organization's key, an unknown id, or a legacy key. */
  findById(organizationId: string, keyId: string): ApiKey | undefined;
  /** Every key, in configuration order. */
  readonly all: readonly ApiKey[];
}

/**
 * Indexes the keys of validated accounts (before anything is connected, so a wrong key is told
 * first). `apiKeys` are extra inference tokens (the CLI's `--api-key`), each added to the first
 * organization as a capped key with {@link DEV_BALANCE} credits, owned by its first member (a new id
 * at each start; on Redis its balance is kept across restarts under a hash of the token). Each
 * token's form was checked with the other options (`resolveSenderOptions`); what needs the accounts
 * is checked here.
 *
 * @throws JobhookError `ERR_OPTION_INVALID` for an api key that is another key's token, or no organization to add it to.
 */
export function buildAccountKeys(accounts: AccountsConfig, apiKeys: readonly string[] = []): AccountKeys {
  const byHash = new Map<string, ApiKey>();
  const byId = new Map<string, ApiKey>();
  const all: ApiKey[] = [];
  // The ledger names a key by its id, stable across restarts; a legacy key (no id) and a `--api-key`
  // (an id made at each start) by a hash of their token, as stable and never shown.
  const add = (config: KeyConfig, organizationId: string, refByToken = false): void => {
    const hash = sha256(config.token);
    const key = toApiKey(
      config,
      organizationId,
      config.id === null || refByToken ? `token-${sha256(`jobhook ledger\n${config.token}`).slice(0, 32)}` : config.id.toLowerCase(),
    );
    byHash.set(hash, key);
    if (key.id !== null) byId.set(key.id, key);
    all.push(key);
  };
  for (const org of accounts.organizations) {
    for (const key of org.keys) add(key, org.id);
  }
  const first = accounts.organizations[0];
  apiKeys.forEach((token, i) => {
    if (byHash.has(sha256(token))) throw optionError('createSender', `apiKeys[${i}] is already the token of another key`);
    const member = first?.members[0];
    if (first === undefined || member === undefined) {
      throw optionError('createSender', 'apiKeys need an organization with at least one member');
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
      true,
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
    all,
  };
}

/** The registry: `keys`, charged through `ledger`. */
export function createAccountRegistry(keys: AccountKeys, ledger: CreditLedger): AccountRegistry {
  return {
    findByToken: (token) => keys.findByToken(token),
    findById: (organizationId, keyId) => keys.findById(organizationId, keyId),
    charge: (key, price) => ledger.charge(key.account, price),
    refund: (key, price) => ledger.refund(key.account, price),
    async managementView(key) {
      const balance = key.account.cap === null ? key.configBalance : (await ledger.read(key.account)).balance;
      return managementKeyView(key, balance);
    },
    async usage() {
      return Promise.all(
        keys.all.map(async (key) => {
          const entry = await ledger.read(key.account);
          return {
            keyId: key.id,
            organizationId: key.organizationId,
            name: key.name,
            masked: key.masked,
            requests: entry.requests,
            spent: entry.spent,
            balance: key.account.cap === null ? key.configBalance : entry.balance,
          };
        }),
      );
    },
  };
}
