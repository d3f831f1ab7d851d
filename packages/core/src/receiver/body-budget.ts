/**
 * The bytes of request bodies a receiver reads at once: each admitted body reserves its declared
 * `Content-Length` (or the body limit, when it declares none) before a byte of it is read, and gives
 * it back once it is read and verified, refused or timed out. A body that finds the budget spent is
 * not read at all, so what unauthenticated and replayed bodies hold in memory has a ceiling.
 * @internal
 */
export interface BodyBudget {
  /** Reserves `bytes`; false (nothing reserved) when that would pass the capacity. */
  tryReserve(bytes: number): boolean;
  /** Gives back bytes reserved earlier. */
  release(bytes: number): void;
  /** Bytes reserved right now. */
  readonly reserved: number;
}

/** A {@link BodyBudget} of `capacity` bytes. @internal */
export function createBodyBudget(capacity: number): BodyBudget {
  let reserved = 0;
  return {
    tryReserve(bytes) {
      if (reserved + bytes > capacity) return false;
      reserved += bytes;
      return true;
    },
    release(bytes) {
      reserved -= bytes;
    },
    get reserved() {
      return reserved;
    },
  };
}
