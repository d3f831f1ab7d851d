import { checkMs, describeValue, MAX_TIMER_MS, optionError, readOption } from './option-checks.js';

// The options every Redis-backed part of core takes alike (the store and the ledger): the client
// or URL, the key prefix, the per-command timeout. Checked here once, so both refuse alike.

/** Default `operationTimeoutMs` of the Redis store and ledger: 2 s per command. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 2000;

/** Longest `keyPrefix` of the Redis store and ledger. */
export const MAX_KEY_PREFIX_LENGTH = 100;

/** The Redis options of a store or ledger, checked; `redis` is checked when the client is made. @internal */
export interface ResolvedRedisOptions {
  readonly redis: unknown;
  readonly keyPrefix: string;
  readonly timeoutMs: number;
}

/**
 * Checks `redis`, `keyPrefix` (no `{` or `}`: the job id is each key's cluster hash tag) and
 * `operationTimeoutMs` of a Redis-backed store or ledger.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveRedisOptions(where: string, options: unknown, defaultPrefix: string): ResolvedRedisOptions {
  const redis = readOption(where, options, 'redis');
  const keyPrefix = readOption(where, options, 'keyPrefix') ?? defaultPrefix;
  if (typeof keyPrefix !== 'string' || keyPrefix.length > MAX_KEY_PREFIX_LENGTH || /[{}]/.test(keyPrefix)) {
    throw optionError(
      where,
      `keyPrefix must be a string of at most ${MAX_KEY_PREFIX_LENGTH} characters without { or } (jobhook's keys carry the job id as their cluster hash tag), got ${describeValue(keyPrefix)}`,
    );
  }
  const timeoutMs = checkMs(where, 'operationTimeoutMs', readOption(where, options, 'operationTimeoutMs') ?? DEFAULT_OPERATION_TIMEOUT_MS, {
    max: MAX_TIMER_MS,
  });
  return { redis, keyPrefix, timeoutMs };
}
