/**
 * @jobhook/core/internal: small checks that several jobhook packages (core, delivery, sender, cli, postgres)
 * make alike, kept in one place so they answer alike. Not a public API: no semver promise.
 * @packageDocumentation
 * @internal
 */
export { isLogger } from '../log/logger.js';
export { isHeaderName } from '../signature/headers.js';
export { BODY_STYLES, isBodyStyle } from '../signature/sign.js';
export { quitRedisClient } from './quit-redis-client.js';
export { parseRetryAfter } from './retry-after.js';
export { checkJobId, checkMs, checkToken, describeValue, MAX_TOKEN_LENGTH, optionError, readOption } from './store-checks.js';

/** `setTimeout` fires at once beyond 2^31-1 ms, so longer waits are taken in steps (or refused). */
export const MAX_TIMER_MS = 2_147_483_647;

/** The parsed URL when `value` is a `redis://` or `rediss://` URL, else `undefined`. */
export function parseRedisUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return undefined;
  }
  return parsed.protocol === 'redis:' || parsed.protocol === 'rediss:' ? parsed : undefined;
}

/** `url` with its password replaced by `***`, for messages and logs; `<unparsable URL>` when it is not a URL. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparsable URL>';
  }
}
export { checkEpochMs, checkLeaseOptions, checkLedgerKey, ledgerClock } from '../ledger/job-ledger.js';
