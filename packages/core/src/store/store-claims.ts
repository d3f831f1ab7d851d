import { SameTurnSides, type SameTurn } from '../internal/same-turn.js';
import { isTagNonceStore, type ClaimResult, type IdempotencyStore, type TagNonceBinding } from './idempotency-store.js';

/**
 * A store's claims as the receive path makes them: arguments it checked once, at construction, given
 * as they are (no options object per call), each answer in the caller's turn when the store gives it
 * there (the memory store's), else a promise. Each throws or rejects with what the store does
 * (`ERR_STORE_UNAVAILABLE`).
 * @internal
 */
export interface StoreClaims {
  claim(jobId: string, leaseMs: number): SameTurn<ClaimResult>;
  complete(jobId: string, token: string, ttlMs: number): SameTurn<boolean>;
  release(jobId: string, token: string): SameTurn<boolean>;
  /** {@link TagNonceStore.bindTagNonce}; undefined for a store without it. */
  readonly bindTagNonce: ((nonce: string, jobId: string, ttlMs: number) => SameTurn<TagNonceBinding>) | undefined;
}

/**
 * The claims a store offers in the caller's turn, without its public methods' argument checks and
 * promises (the memory store's: `createMemoryStore` offers them). See internal/same-turn.ts.
 * @internal
 */
export const sameTurnClaims = new SameTurnSides<IdempotencyStore, StoreClaims>();

/**
 * `store`'s claims as the receive path makes them: those it offers in the caller's turn
 * ({@link sameTurnClaims}), else its public methods'.
 * @internal
 */
export function storeClaimsOf(store: IdempotencyStore): StoreClaims {
  return sameTurnClaims.of(store) ?? publicClaims(store);
}

/** The claims of a store through its public methods: a store of your own, Redis, PostgreSQL, a copy of the memory store. */
function publicClaims(store: IdempotencyStore): StoreClaims {
  return {
    claim: (jobId, leaseMs) => store.claim(jobId, { leaseMs }),
    complete: (jobId, token, ttlMs) => store.complete(jobId, token, { ttlMs }),
    release: (jobId, token) => store.release(jobId, token),
    bindTagNonce: isTagNonceStore(store) ? (nonce, jobId, ttlMs) => store.bindTagNonce(nonce, jobId, { ttlMs }) : undefined,
  };
}
