/**
 * The idempotency contract every store implements. The receive pipeline claims a `job_id` before
 * running the handler, completes it after success and releases it after failure, so a job is handled
 * once however often it is delivered, and never twice at the same time.
 *
 * A claim is a lease: if its holder dies, the lease runs out and the next delivery may claim the job.
 * Each claim carries a fencing token; `complete`, `release` and `extend` take effect only with the
 * token of the current claim, so a holder whose lease expired (and whose job someone else claimed)
 * cannot complete, release or extend the new holder's claim.
 */
export interface IdempotencyStore {
  /**
   * Tries to claim `jobId` for `leaseMs`.
   * @throws JobhookError `ERR_STORE_UNAVAILABLE` when the store cannot be reached.
   */
  claim(jobId: string, options: { leaseMs: number }): Promise<ClaimResult>;
  /**
   * Marks the claimed job done for `ttlMs`; later claims answer `done` until then.
   * Resolves false (and changes nothing) when `token` is not the current claim's.
   */
  complete(jobId: string, token: string, options: { ttlMs: number }): Promise<boolean>;
  /** Gives the claim up so the next delivery can claim the job. False when `token` is stale. */
  release(jobId: string, token: string): Promise<boolean>;
  /** Renews the lease of a claim still being worked on. False when `token` is stale. */
  extend(jobId: string, token: string, options: { leaseMs: number }): Promise<boolean>;
  /** Releases what the store owns (connections it opened, timers). Idempotent. */
  close(): Promise<void>;
}

/** The answer of {@link IdempotencyStore.claim}. */
export type ClaimResult =
  | { readonly state: 'claimed'; readonly token: string }
  | { readonly state: 'in-flight'; readonly retryAfterMs: number }
  | { readonly state: 'done' };

/** A clock, injectable so lease and TTL logic is tested without sleeping. */
export interface Clock {
  /** Milliseconds, monotonic. */
  now(): number;
}
