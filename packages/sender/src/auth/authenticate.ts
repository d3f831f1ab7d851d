import type { AccountRegistry, ApiKey } from '../accounts/account-registry.js';
import { ApiError } from '../api/api-error.js';
import { readBearerToken } from './bearer.js';

/** The scope management reads require (spec §5.3). */
export const MANAGE_READ_SCOPE = 'manage:read';

/** Who may call an endpoint: inference keys, or management keys holding `scope`. */
export type Audience = { kind: 'inference' } | { kind: 'management'; scope: string };

/** Checks a request's Authorization header for an audience and returns the calling key. */
export type Authenticate = (rawHeaders: readonly string[], audience: Audience) => ApiKey;

const REALM = 'Bearer realm="jobhook"';

function unauthorized(detail: string, error?: 'invalid_request' | 'invalid_token'): ApiError {
  // RFC 6750 §3: no error code when the request had no credentials at all.
  return new ApiError(401, detail, { 'www-authenticate': error === undefined ? REALM : `${REALM}, error="${error}"` });
}

/**
 * The bearer check of every `/v3` endpoint, in this order: header form (401), known token (401),
 * revoked (401), expired (401, `expire_time` at or before now), key kind (401: inference keys on
 * `/v3/manage`, management keys elsewhere), scope (403 with `error="insufficient_scope"`).
 * Every 401 carries `WWW-Authenticate: Bearer realm="jobhook"` (with `error=` as RFC 6750 §3.1 says).
 */
export function createAuthenticator(accounts: AccountRegistry, now: () => Date): Authenticate {
  return function authenticate(rawHeaders, audience) {
    const parsed = readBearerToken(rawHeaders);
    if (!parsed.ok) {
      const missing = !rawHeaders.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'authorization');
      throw unauthorized(parsed.detail, missing ? undefined : 'invalid_request');
    }
    const key = accounts.findByToken(parsed.token);
    if (key === undefined) throw unauthorized('invalid API key', 'invalid_token');
    if (key.revoked) throw unauthorized(`this API key was revoked at ${key.revokedAt ?? 'an unknown time'}`, 'invalid_token');
    if (key.expiresAtMs !== null && key.expiresAtMs <= now().getTime()) {
      throw unauthorized(`this API key expired at ${key.expireTime ?? 'an unknown time'}`, 'invalid_token');
    }
    if (audience.kind === 'management') {
      if (key.kind !== 'management') {
        throw unauthorized('management endpoints accept only management keys; inference API keys are rejected', 'invalid_token');
      }
      if (!key.scopes.has(audience.scope)) {
        throw new ApiError(403, `this management key lacks the scope ${audience.scope}`, {
          'www-authenticate': `${REALM}, error="insufficient_scope", scope="${audience.scope}"`,
        });
      }
    } else if (key.kind !== 'inference') {
      throw unauthorized('this endpoint accepts only inference API keys; management keys are rejected', 'invalid_token');
    }
    return key;
  };
}
