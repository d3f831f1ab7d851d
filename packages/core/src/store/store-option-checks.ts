import { checkMethods } from '../internal/option-checks.js';
import type { IdempotencyStore } from './idempotency-store.js';

/** The methods every {@link IdempotencyStore} has: what a `store` option is checked for. */
const STORE_METHODS = ['claim', 'complete', 'release', 'extend'] as const;

/**
 * Returns `value` when it has every method of an {@link IdempotencyStore}, else throws
 * `ERR_OPTION_INVALID` naming `store`: the check of each factory that takes a store
 * (`createReceiver`, the client's `createResultWaiter`).
 * @internal
 */
export function checkStore(where: string, value: unknown): IdempotencyStore {
  return checkMethods<IdempotencyStore>(where, 'store', value, STORE_METHODS, 'an IdempotencyStore');
}
