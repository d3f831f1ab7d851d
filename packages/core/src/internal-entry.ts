/**
 * @jobhook/core/internal: the checks and helpers that several jobhook packages (core, delivery,
 * sender, client, cli, postgres) make alike, kept in one place so they answer alike. Every option
 * check takes the caller's name first (see option-checks.ts). The Redis client settings live in
 * `@jobhook/core/internal/redis`, apart, so that importing this entry never loads ioredis.
 * Not a public API: no semver promise.
 * @packageDocumentation
 * @internal
 */
export { checkLogger, resolveLogger } from './log/log-option-checks.js';
export { checkStore } from './store/store-option-checks.js';
export { isHeaderName } from './signature/headers.js';
export { BODY_STYLES, isBodyStyle } from './signature/signature-option-checks.js';
export {
  type Bounds,
  checkBoolean,
  checkFunction,
  checkInteger,
  checkJobId,
  checkMethods,
  checkMs,
  checkOneOf,
  checkNumber,
  checkObject,
  checkRedisUrl,
  checkTagNonce,
  checkToken,
  describeValue,
  MAX_JOB_ID_LENGTH,
  MAX_TIMER_MS,
  MAX_TOKEN_LENGTH,
  optionError,
  parseRedisUrl,
  readOption,
  redactUrl,
} from './internal/option-checks.js';
export { quitRedisClient } from './internal/quit-redis-client.js';
export { parseRetryAfter } from './internal/retry-after.js';
export {
  checkEpochMs,
  checkLeaseOptions,
  checkLedgerKey,
  ledgerArgs,
  ledgerClock,
  type LedgerArgs,
} from './ledger/ledger-option-checks.js';
export { countTopLevelKey } from './canonical/top-level-keys.js';
export { withoutTag } from './recipient/recipient-check.js';
