import { JobhookError } from '../errors.js';
import { describeValue } from '../internal/option-checks.js';
import { afterTurn } from '../internal/same-turn.js';
import type { Logger } from '../log/logger.js';
import type { NonceBinder } from '../recipient/recipient-check.js';
import type { IdempotencyStore, TagNonceBinding } from '../store/idempotency-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import { storeClaimsOf, type StoreClaims } from '../store/store-claims.js';

/**
 * The receiver's binding of tag nonces to jobs, in `store` ({@link TagNonceStore.bindTagNonce}, through
 * its claims: in the same turn on the memory store). A store without it (one of your own) gets a
 * memory store of the receiver's own, for the nonces only, and a warning at construction: each
 * process then binds on its own, so a copied tag passes once per receiver process (and once more
 * after a restart) rather than once.
 * @internal
 */
export function createNonceBinder(store: IdempotencyStore, owner: string, log: Logger): NonceBinder {
  const bind = storeClaimsOf(store).bindTagNonce ?? ownBinding(owner, log);
  return (nonce, jobId, ttlMs) => afterTurn(bind(nonce, jobId, ttlMs), ours);
}

/** The bindings of a memory store of the receiver's own, with the warning that says what they cost. */
function ownBinding(owner: string, log: Logger): NonNullable<StoreClaims['bindTagNonce']> {
  log.warn(
    { store: 'no bindTagNonce' },
    `jobhook: ${owner}: the store cannot bind recipient tag nonces (TagNonceStore); they are bound in this process only, so a tag copied onto other jobs passes once per process`,
  );
  return storeClaimsOf(createMemoryStore()).bindTagNonce!;
}

/**
 * True when the nonce is the job's (bound to it now or before), false when another job's. Any other
 * answer (a store of your own with a bug) is a store failure, 503: never a pass.
 */
function ours(binding: TagNonceBinding): boolean {
  if (binding === 'bound' || binding === 'same') return true;
  if (binding === 'other') return false;
  throw new JobhookError(
    'ERR_STORE_UNAVAILABLE',
    `the store's bindTagNonce answered ${describeValue(binding)}, not 'bound', 'same' or 'other'`,
  );
}
