import { randomUUID } from 'node:crypto';
import type { AccountsConfig } from './accounts-config.js';
import { generateToken } from './api-token.js';

/** Balance of the generated dev inference key. */
export const DEV_BALANCE = 1000;
/** The member of the generated dev organization. */
export const DEV_MEMBER = 'dev@jobhook.test';

/** Accounts of a sender started without an accounts file, and the tokens to call it with. */
export interface DevAccounts {
  config: AccountsConfig;
  keys: { inference: string; management: string };
}

function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.min(15, Math.floor(random() * 16)).toString(16));
  hex[12] = '4';
  hex[16] = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/**
 * One organization (`dev`) with one member and two keys with random tokens: an inference key
 * (`jh_inf_…`, balance 1000, capped) and a management key (`jh_mgmt_…`, scope `manage:read`).
 * `random` makes tokens and ids reproducible in tests.
 */
export function createDevAccounts(random?: () => number): DevAccounts {
  const id = random === undefined ? randomUUID : () => uuidFrom(random);
  const inference = generateToken('jh_inf_', random);
  const management = generateToken('jh_mgmt_', random);
  return {
    keys: { inference, management },
    config: {
      organizations: [
        {
          id: 'dev',
          name: 'Development',
          members: [DEV_MEMBER],
          keys: [
            {
              id: id(),
              token: inference,
              kind: 'inference',
              name: 'dev inference key',
              member: DEV_MEMBER,
              token_type: 'sandbox_api_token',
              scopes: [],
              active_balance: true,
              balance: DEV_BALANCE,
              expire_time: null,
              revoked: false,
              revoked_at: null,
            },
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
      ],
    },
  };
}
