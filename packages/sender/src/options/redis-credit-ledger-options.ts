import type { Redis } from 'ioredis';
import { checkObject, describeValue, optionError } from '@jobhook/core/internal';

/** Options of `createRedisCreditLedger`. */
export interface RedisCreditLedgerOptions {
  /** An ioredis client (stays yours) or a `redis://` / `rediss://` URL (opened here, closed by `close()`). */
  redis: string | Redis;
  /** Prefix of every key. Default `'jobhook:sender:'`. */
  prefix?: string;
}

/** {@link RedisCreditLedgerOptions} checked, with defaults (`redis` is checked where it is opened, by the kit's `redisFromOption`). @internal */
export interface ResolvedRedisCreditLedgerOptions {
  redis: string | Redis;
  prefix: string;
}

const WHERE = 'createRedisCreditLedger';

/**
 * Checks the options of `createRedisCreditLedger` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveRedisCreditLedgerOptions(options: RedisCreditLedgerOptions): ResolvedRedisCreditLedgerOptions {
  checkObject(WHERE, 'options', options, 'an object with `redis`');
  const prefix = options.prefix ?? 'jobhook:sender:';
  if (typeof prefix !== 'string') throw optionError(WHERE, `prefix must be a string, got ${describeValue(prefix)}`);
  return { redis: options.redis, prefix };
}
