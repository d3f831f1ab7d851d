import { JobhookError } from '../errors.js';
import { describeValue } from '../internal/option-checks.js';
import type { Logger } from '../log/logger.js';
import type { NonceBinder } from '../recipient/recipient-check.js';
import { isTagNonceStore, syncClaimsOf, type IdempotencyStore, type TagNonceBinding } from '../store/idempotency-store.js';
import { createMemoryStore } from '../store/memory-store.js';

/**
 * The receiver's binding of tag nonces to jobs, in `store`: in the same turn on a store
 * that answers in it (the memory store, through its sync claims: the arguments are the receiver's,
 * checked already), else through {@link TagNonceStore.bindTagNonce}. A store without it (one of your
 * own) gets a memory store of the receiver's own, for the nonces only, and a warning at construction:
 * each process then binds on its own, so a copied tag passes once per receiver process (and once more
 * after a restart) rather than once.
 * @internal
 */
export function createNonceBinder(store: IdempotencyStore, owner: string, log: Logger): NonceBinder {
  const sync = syncClaimsOf(store);
  if (sync !== undefined) return (nonce, jobId, ttlMs) => ours(sync.bindTagNonce(nonce, jobId, ttlMs));
  if (isTagNonceStore(store)) return (nonce, jobId, ttlMs) => store.bindTagNonce(nonce, jobId, { ttlMs }).then(ours);
  log.warn(
    { store: 'no bindTagNonce' },
    `jobhook: ${owner}: the store cannot bind recipient tag nonces (TagNonceStore); they are bound in this process only, so a tag copied onto other jobs passes once per process`,
  );
  const own = syncClaimsOf(createMemoryStore()) as NonNullable<ReturnType<typeof syncClaimsOf>>;
  return (nonce, jobId, ttlMs) => ours(own.bindTagNonce(nonce, jobId, ttlMs));
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
