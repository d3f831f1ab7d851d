/**
 * Interns short ASCII object keys: large payloads repeat a handful of keys thousands of times, and
 * comparing bytes with a cached string is cheaper than making a new string each time. Interned
 * strings also compare by identity, which lets same-shaped objects reuse one key order.
 * @internal
 */
export class AsciiKeyCache {
  private readonly slots = new Array<string | undefined>(512);

  /** The key `b[start, end)`, which must be ASCII without escapes. */
  get(b: Buffer, start: number, end: number): string {
    const len = end - start;
    if (len > 48) return b.toString('latin1', start, end);
    let h = len;
    for (let i = start; i < end; i++) h = (Math.imul(h, 31) + b[i]!) | 0;
    const slot = h & 511;
    const cached = this.slots[slot];
    if (cached !== undefined && cached.length === len) {
      let same = true;
      for (let i = 0; i < len; i++) {
        if (cached.charCodeAt(i) !== b[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return cached;
    }
    const key = b.toString('latin1', start, end);
    this.slots[slot] = key;
    return key;
  }
}

/** The process-wide cache: webhooks repeat the same few keys request after request. @internal */
export const sharedKeyCache = new AsciiKeyCache();
