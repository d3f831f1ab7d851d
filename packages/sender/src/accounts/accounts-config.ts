/** Whether a key calls the inference API (`/v3/universal-ai`, `/v3/llm`) or the management API (`/v3/manage`). */
export type KeyKind = 'inference' | 'management';

/** `token_type` of a key (spec §2.1): `sandbox_api_token` (sandbox) or `api_token` (back). */
export type TokenType = 'sandbox_api_token' | 'api_token';

/**
 * One API key of the accounts file. Field names and rules are those of the spec's ManagementKey
 * (§2.1), plus `token` (the secret, never answered), `kind` and `scopes`.
 */
export interface KeyConfig {
  /** UUID, or null for a legacy key (listed, never addressable by URL). */
  id: string | null;
  /** The secret bearer token: 16-512 RFC 6750 token characters (`A-Z a-z 0-9 - . _ ~ + /`, then `=` padding). */
  token: string;
  kind: KeyKind;
  /** At most 200 characters. */
  name: string;
  /** Email of a member of the organization. */
  member: string;
  token_type?: TokenType;
  /** Management keys only, e.g. `['manage:read']`. Default none. */
  scopes?: readonly string[];
  /** Whether `balance` caps spending. Default false. */
  active_balance?: boolean;
  /** Strictly between -100000 and 100000, or null for no spending cap. */
  balance: number | null;
  /** ISO 8601 date-time with a time zone, or null (never expires). */
  expire_time?: string | null;
  revoked: boolean;
  /** ISO 8601 date-time with a time zone; given (not null) exactly when `revoked` is true. */
  revoked_at?: string | null;
}

/** One organization: its members (emails) and its keys. */
export interface OrganizationConfig {
  /** Unique among organizations; jobs and keys of another organization answer 404. */
  id: string;
  name?: string;
  /** Member emails. */
  members: readonly string[];
  keys: readonly KeyConfig[];
}

/**
 * The accounts of a sender: `{ "organizations": [...] }`, usually read from a JSON file with
 * `loadAccountsConfig`.
 *
 * @example
 * ```json
 * { "organizations": [{ "id": "acme", "members": ["ada@acme.test"], "keys": [{
 *   "id": "0b7f3c1e-8f0a-4b9e-9a51-3f1f2b6f7d10", "token": "jh_inf_2Hc9Qm...", "kind": "inference",
 *   "name": "backend", "member": "ada@acme.test", "active_balance": true, "balance": 50,
 *   "revoked": false }] }] }
 * ```
 */
export interface AccountsConfig {
  organizations: readonly OrganizationConfig[];
}
