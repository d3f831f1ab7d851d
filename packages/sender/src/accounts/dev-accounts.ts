import { randomUUID } from 'node:crypto';
import type { AccountsConfig, KeyConfig } from './accounts-config.js';
import { generateToken } from './api-token.js';

/** Balance of each generated dev inference key. */
export const DEV_BALANCE = 1000;
/** The member of the generated dev organization. */
export const DEV_MEMBER = 'dev@jobhook.test';
/** The member of the second generated organization. */
export const OTHER_MEMBER = 'dev@other.test';

/**
 * The tokens of the generated dev accounts: the first organization's (`dev`) inference and
 * management keys, and the second organization's (`other`) inference key.
 */
export interface DevKeys {
  /** `jh_inf_…` of organization `dev`. */
  inference: string;
  /** `jh_mgmt_…` of organization `dev` (`manage:read`). */
  management: string;
  /** `jh_inf_…` of organization `other`: another customer of the same service, to try recipient tags with. */
  otherInference: string;
}

/** Accounts of a sender started without an accounts file, and the tokens to call it with. */
export interface DevAccounts {
  config: AccountsConfig;
  keys: DevKeys;
}

function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.min(15, Math.floor(random() * 16)).toString(16));
  hex[12] = '4';
  hex[16] = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

function inferenceKey(id: string, token: string, name: string, member: string): KeyConfig {
  return {
    id,
    token,
    kind: 'inference',
    name,
    member,
    token_type: 'sandbox_api_token',
    scopes: [],
    active_balance: true,
    balance: DEV_BALANCE,
    expire_time: null,
    revoked: false,
    revoked_at: null,
  };
}

/**
 * Two organizations with random tokens, so trust across customers can be tried against one
 * service: `dev` (member `dev@jobhook.test`) with an inference key (`jh_inf_…`, balance 1000,
 * capped) and a management key (`jh_mgmt_…`, scope `manage:read`), and `other` (member
 * `dev@other.test`) with an inference key of its own. The service signs both organizations' jobs
 * with its one key. `random` makes tokens and ids reproducible in tests.
 */
export function createDevAccounts(random?: () => number): DevAccounts {
  const id = random === undefined ? randomUUID : () => uuidFrom(random);
  const inference = generateToken('jh_inf_', random);
  const management = generateToken('jh_mgmt_', random);
  const otherInference = generateToken('jh_inf_', random);
  return {
    keys: { inference, management, otherInference },
    config: {
      organizations: [
        {
          id: 'dev',
          name: 'Development',
          members: [DEV_MEMBER],
          keys: [
            inferenceKey(id(), inference, 'dev inference key', DEV_MEMBER),
            {
              id: id(),
              token: management,
              kind: 'management',
              name: 'dev management key',
              member: DEV_MEMBER,
              token_type: 'sandbox_api_token',
              scopes: ['manage:read'],
              active_balance: false,
              balance: null,
              expire_time: null,
              revoked: false,
              revoked_at: null,
            },
          ],
        },
        {
          id: 'other',
          name: 'Another customer',
          members: [OTHER_MEMBER],
          keys: [inferenceKey(id(), otherInference, 'other inference key', OTHER_MEMBER)],
        },
      ],
    },
  };
}

/**
 * The dev tokens of accounts read back from a state folder: the first live key of each kind
 * {@link createDevAccounts} makes, by position (organization 1's inference and management keys,
 * organization 2's inference key). Null when one is missing (the file was edited by hand).
 */
export function devKeysOf(config: AccountsConfig): DevKeys | null {
  const [first, second] = config.organizations;
  const live = (org: typeof first, kind: KeyConfig['kind']) => org?.keys.find((k) => k.kind === kind && !k.revoked)?.token;
  const inference = live(first, 'inference');
  const management = live(first, 'management');
  const otherInference = live(second, 'inference');
  return inference === undefined || management === undefined || otherInference === undefined
    ? null
    : { inference, management, otherInference };
}
