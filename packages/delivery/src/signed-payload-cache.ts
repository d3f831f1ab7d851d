/** A job's webhook as signed once: the body to POST and its signature headers. */
export interface SignedWebhook {
  body: Buffer;
  /** `Content-Type` and the `X-Service-*` headers. */
  headers: Readonly<Record<string, string>>;
}

/** Limits of {@link createSignedPayloadCache}. */
export interface SignedPayloadCacheOptions {
  /** Most jobs kept. */
  maxEntries: number;
  /** Most bytes kept (bodies plus a fixed allowance per entry for headers and bookkeeping). */
  maxBytes: number;
}

/** Bytes counted per entry on top of its body: the signature header (512+ hex characters), the other headers, the map entry. */
export const ENTRY_OVERHEAD_BYTES = 1024;

/** The signed webhooks of recent jobs, keyed by job id. @internal */
export interface SignedPayloadCache {
  /**
   * The signed webhook of `jobId`: the cached one, or `sign()`'s, which is then kept. Concurrent
   * calls for one job share one `sign()`. A failed `sign()` is not kept (the next call signs again).
   */
  get(jobId: string, sign: () => Promise<SignedWebhook>): Promise<SignedWebhook>;
  /** The cached (or being signed) webhook of `jobId`, without keeping anything new nor reordering. */
  peek(jobId: string): Promise<SignedWebhook> | undefined;
  /** Jobs held, signed or being signed. */
  readonly size: number;
  /** Bytes counted for the signed entries. */
  readonly bytes: number;
}

interface Entry {
  promise: Promise<SignedWebhook>;
  /** 0 until signed. */
  bytes: number;
}

/**
 * A bounded least-recently-used cache of signed webhooks. The payload of a final job never changes
 * and the deliverer's key is fixed, so a job's webhook is canonicalized and signed once and every
 * attempt and redelivery round reuses the bytes. Bounded by entries and bytes: the oldest entries
 * are dropped first, and an entry larger than `maxBytes` on its own is used once and not kept.
 * A dropped entry only costs a new signature (RSA PKCS#1 v1.5 is deterministic: the same bytes).
 * @internal
 */
export function createSignedPayloadCache(options: SignedPayloadCacheOptions): SignedPayloadCache {
  const { maxEntries, maxBytes } = options;
  // A Map iterates in insertion order: re-inserting on use makes the first key the least recent.
  const entries = new Map<string, Entry>();
  let bytes = 0;

  const drop = (jobId: string, entry: Entry): void => {
    if (entries.get(jobId) !== entry) return;
    entries.delete(jobId);
    bytes -= entry.bytes;
  };
  const evict = (): void => {
    for (const [jobId, entry] of entries) {
      if (entries.size <= maxEntries && bytes <= maxBytes) return;
      drop(jobId, entry);
    }
  };

  return {
    get(jobId, sign) {
      const hit = entries.get(jobId);
      if (hit !== undefined) {
        entries.delete(jobId);
        entries.set(jobId, hit);
        return hit.promise;
      }
      const entry: Entry = { promise: sign(), bytes: 0 };
      entries.set(jobId, entry);
      evict();
      entry.promise.then(
        (signed) => {
          if (entries.get(jobId) !== entry) return; // evicted while signing
          entry.bytes = signed.body.length + ENTRY_OVERHEAD_BYTES;
          bytes += entry.bytes;
          if (entry.bytes > maxBytes) drop(jobId, entry);
          else evict();
        },
        () => drop(jobId, entry),
      );
      return entry.promise;
    },
    peek(jobId) {
      return entries.get(jobId)?.promise;
    },
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
  };
}
