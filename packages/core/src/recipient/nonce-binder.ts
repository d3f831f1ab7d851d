import type { Logger } from '../log/logger.js';
import { isTagNonceStore, syncClaimsOf, type IdempotencyStore, type TagNonceBinding } from '../store/idempotency-store.js';
import { createMemoryStore } from '../store/memory-store.js';

/** Binds a valid tag's nonce to its job: the answer in this turn, or the store's promise. @internal */
export type NonceBinder = (nonce: string, jobId: string) => TagNonceBinding | Promise<TagNonceBinding>;

/**
 * The receiver's binding of tag nonces to jobs, for `ttlMs`, in `store`: in the same turn on a store
 * that answers in it (the memory store, through its sync claims: the arguments are the receiver's,
 * checked already), else through {@link TagNonceStore.bindTagNonce}. A store without it (one of your
 * own) gets a memory store of the receiver's own, for the nonces only, and a warning at construction:
 * each process then binds on its own, so a copied tag passes once per receiver process (and once more
 * after a restart) rather than once.
 * @internal
 */
export function createNonceBinder(store: IdempotencyStore, ttlMs: number, owner: string, log: Logger | undefined): NonceBinder {
  const sync = syncClaimsOf(store);
  if (sync !== undefined) return (nonce, jobId) => sync.bindTagNonce(nonce, jobId, ttlMs);
  if (isTagNonceStore(store)) {
    const options = Object.freeze({ ttlMs });
    return (nonce, jobId) => store.bindTagNonce(nonce, jobId, options);
  }
  log?.warn(
    { store: 'no bindTagNonce' },
    `jobhook: ${owner}: the store cannot bind recipient tag nonces (TagNonceStore); they are bound in this process only, so a tag copied onto other jobs passes once per process`,
  );
  const own = syncClaimsOf(createMemoryStore()) as NonNullable<ReturnType<typeof syncClaimsOf>>;
  return (nonce, jobId) => own.bindTagNonce(nonce, jobId, ttlMs);
}
