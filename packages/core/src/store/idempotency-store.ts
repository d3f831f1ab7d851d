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
   * Tries to claim `jobId` for `leaseMs`: `claimed` with a new token when nobody holds it and it is
   * not done; `in-flight` with `retryAfterMs` (ms until the current lease runs out, at least 1) when
   * a live claim holds it; `done` when it completed less than its `ttlMs` ago.
   * @throws JobhookError `ERR_STORE_UNAVAILABLE` when the store cannot be reached (then nothing was
   * claimed); `ERR_OPTION_INVALID` when `jobId` is not a 1–200-character string or `leaseMs` not a
   * positive whole number.
   */
  claim(jobId: string, options: { leaseMs: number }): Promise<ClaimResult>;
  /**
   * Marks the claimed job done for `ttlMs`; later claims answer `done` until then.
   * Resolves false (and changes nothing) when `token` is not the current claim's — including when
   * its lease ran out, even if nobody claimed the job since (extend the lease of a slow handler).
   */
  complete(jobId: string, token: string, options: { ttlMs: number }): Promise<boolean>;
  /** Gives the claim up so the next delivery can claim the job. False (nothing changed) when `token` is stale. */
  release(jobId: string, token: string): Promise<boolean>;
  /**
   * Renews the lease of a claim still being worked on: it now runs out `leaseMs` from now (set, not
   * added). False (nothing changed) when `token` is stale or its lease already ran out.
   */
  extend(jobId: string, token: string, options: { leaseMs: number }): Promise<boolean>;
  /**
   * Releases what the store owns (connections it opened, timers). Idempotent. Afterwards every
   * operation rejects with `ERR_STORE_UNAVAILABLE`.
   */
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

/**
 * A store that can also run the handler inside its own database transaction, so the handler's
 * writes and the job's done mark commit together or not at all (exactly-once effects across
 * crashes: the inbox pattern). The receive pipeline uses {@link TransactionalStore.runInTransaction}
 * instead of claim → complete | release when the store offers it, and hands the transaction to the
 * handler as `ctx.db`. In this mode the transaction is the lease: no `extend` heartbeat, and a
 * receiver that dies mid-handler has its transaction rolled back by the database.
 */
export interface TransactionalStore<Db = unknown> extends IdempotencyStore {
  /**
   * In one new transaction: takes `jobId` without waiting (a try-lock: a concurrent holder answers
   * `in-flight` at once), answers `done` when its done mark is there, else runs `work(db)` and writes
   * the done mark (kept for `doneTtlMs`) before committing. `work` rejecting rolls everything back
   * (`rolled-back`, with its error).
   * @throws JobhookError `ERR_STORE_UNAVAILABLE` when the database cannot be reached or the commit
   * fails (then nothing of the handler's work was kept).
   */
  runInTransaction(jobId: string, options: { doneTtlMs: number }, work: (db: Db) => Promise<void>): Promise<TransactionResult>;
}

/** The answer of {@link TransactionalStore.runInTransaction}. */
export type TransactionResult =
  | { readonly state: 'committed' }
  | { readonly state: 'done' }
  | { readonly state: 'in-flight'; readonly retryAfterMs: number }
  | { readonly state: 'rolled-back'; readonly error: unknown };

/** True when `store` offers {@link TransactionalStore.runInTransaction}. */
export function isTransactionalStore(store: IdempotencyStore): store is TransactionalStore {
  return typeof (store as Partial<TransactionalStore>).runInTransaction === 'function';
}

/**
 * What a store answers when asked to bind a recipient tag's nonce to a job:
 * `bound` (the nonce was free, and is now this job's), `same` (bound to this job already: a
 * redelivery, a poll of the same job) or `other` (bound to another job: the tag was copied).
 */
export type TagNonceBinding = 'bound' | 'same' | 'other';

/**
 * A store that binds each recipient tag's nonce to the first job that carried it, so a tag copied
 * onto another job is refused (`ERR_RECIPIENT_TAG_REUSED`). The receiver (with `recipientSecret`)
 * binds every valid tag's nonce after the signature and before the claim, outside any transaction
 * of the store, so the binding stays whatever the handler does. jobhook's memory, Redis and
 * PostgreSQL stores implement it; a store of your own may (`describeStoreConformance` checks it with
 * `tagNonceStore: true`), else the receiver binds nonces in its own process (see the README).
 *
 * @example
 * ```ts
 * const store = createMemoryStore();
 * await store.bindTagNonce(nonce, jobId, { ttlMs: 6 * 3_600_000 }); // 'bound'
 * await store.bindTagNonce(nonce, jobId, { ttlMs: 6 * 3_600_000 }); // 'same'
 * await store.bindTagNonce(nonce, otherJobId, { ttlMs: 6 * 3_600_000 }); // 'other'
 * ```
 */
export interface TagNonceStore {
  /**
   * Binds `nonce` to `jobId` for `ttlMs` when no live binding holds it (`bound`); otherwise answers
   * whether the live binding is this job's (`same`) or another's (`other`), changing nothing. Atomic:
   * of concurrent calls for one nonce, one binds and the others see its job. A binding is never
   * released early: not by a failed handler, not by a rollback.
   * @throws JobhookError `ERR_STORE_UNAVAILABLE` when the store cannot be reached (nothing was
   * bound); `ERR_OPTION_INVALID` when `nonce` or `jobId` is not a 1–200-character string or `ttlMs`
   * not a positive whole number.
   */
  bindTagNonce(nonce: string, jobId: string, options: { ttlMs: number }): Promise<TagNonceBinding>;
}

/** True when `store` offers {@link TagNonceStore.bindTagNonce}. @internal */
export function isTagNonceStore<S extends object>(store: S): store is S & TagNonceStore {
  return typeof (store as Partial<TagNonceStore>).bindTagNonce === 'function';
}
