import * as Tape from './tape.js';

/**
 * Reading tape strings: decoding them to code points or JavaScript strings, and reading byte ranges
 * of the body (as Latin-1 text, or against an ASCII word) without making a string first.
 * Strings were validated by the parser, so decoding here never meets bad input.
 */

/** Code unit of a one-letter JSON escape (`\n` → 0x0a), indexed by the letter. @internal */
export const UNESCAPE = new Uint8Array(128);
UNESCAPE[0x22] = 0x22;
UNESCAPE[0x5c] = 0x5c;
UNESCAPE[0x2f] = 0x2f;
UNESCAPE[0x62] = 0x08;
UNESCAPE[0x66] = 0x0c;
UNESCAPE[0x6e] = 0x0a;
UNESCAPE[0x72] = 0x0d;
UNESCAPE[0x74] = 0x09;

function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

/** The value of the 4 hex digits at `b[p]` (validated by the parser). @internal */
export function hex4(b: Uint8Array, p: number): number {
  return (hexValue(b[p]!) << 12) | (hexValue(b[p + 1]!) << 8) | (hexValue(b[p + 2]!) << 4) | hexValue(b[p + 3]!);
}

/**
 * The Python code points of a tape string: escapes decoded, a high-surrogate escape joined with an
 * immediately following low-surrogate escape, UTF-8-encoded surrogates kept as separate code points.
 * @internal
 */
export function decodeCodePoints(b: Uint8Array, start: number, end: number): number[] {
  const out: number[] = [];
  let p = start;
  while (p < end) {
    const c = b[p]!;
    if (c === 0x5c) {
      const e = b[p + 1]!;
      if (e !== 0x75) {
        out.push(UNESCAPE[e]!);
        p += 2;
        continue;
      }
      const unit = hex4(b, p + 2);
      p += 6;
      if (unit >= 0xd800 && unit <= 0xdbff && p + 6 <= end && b[p] === 0x5c && b[p + 1] === 0x75) {
        const low = hex4(b, p + 2);
        if (low >= 0xdc00 && low <= 0xdfff) {
          out.push(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00));
          p += 6;
          continue;
        }
      }
      out.push(unit);
    } else if (c < 0x80) {
      out.push(c);
      p++;
    } else if (c < 0xe0) {
      out.push(((c & 0x1f) << 6) | (b[p + 1]! & 0x3f));
      p += 2;
    } else if (c < 0xf0) {
      out.push(((c & 0x0f) << 12) | ((b[p + 1]! & 0x3f) << 6) | (b[p + 2]! & 0x3f));
      p += 3;
    } else {
      out.push(((c & 0x07) << 18) | ((b[p + 1]! & 0x3f) << 12) | ((b[p + 2]! & 0x3f) << 6) | (b[p + 3]! & 0x3f));
      p += 4;
    }
  }
  return out;
}

/** UTF-16 units of the string being decoded; grown on demand. */
// Process-wide on purpose: decoding is synchronous and never re-entered, so one scratch buffer serves every call without allocating.
let units = new Uint16Array(1024);

/**
 * Decodes a tape string to a JavaScript string: plain strings natively, strings with escapes or
 * encoded surrogates by one pass into UTF-16 units (Python's lone surrogates stay single units).
 * @internal
 */
export function decodeString(buf: Buffer, kind: number, start: number, end: number): string {
  if ((kind & (Tape.F_ESC | Tape.F_RAWSURR)) === 0) {
    return (kind & Tape.F_NONASCII) === 0 ? buf.toString('latin1', start, end) : buf.toString('utf8', start, end);
  }
  // A string never has more UTF-16 units than bytes.
  if (units.length < end - start) units = new Uint16Array(Math.max(end - start, units.length * 2));
  const u = units;
  let n = 0;
  let p = start;
  while (p < end) {
    const c = buf[p]!;
    if (c === 0x5c) {
      const e = buf[p + 1]!;
      if (e === 0x75) {
        // Surrogate escapes stay single units: an escaped pair becomes a valid pair, as in Python.
        u[n++] = hex4(buf, p + 2);
        p += 6;
      } else {
        u[n++] = UNESCAPE[e]!;
        p += 2;
      }
    } else if (c < 0x80) {
      u[n++] = c;
      p++;
    } else if (c < 0xe0) {
      u[n++] = ((c & 0x1f) << 6) | (buf[p + 1]! & 0x3f);
      p += 2;
    } else if (c < 0xf0) {
      u[n++] = ((c & 0x0f) << 12) | ((buf[p + 1]! & 0x3f) << 6) | (buf[p + 2]! & 0x3f);
      p += 3;
    } else {
      const cp = ((c & 0x07) << 18) | ((buf[p + 1]! & 0x3f) << 12) | ((buf[p + 2]! & 0x3f) << 6) | (buf[p + 3]! & 0x3f);
      u[n++] = 0xd800 + ((cp - 0x10000) >> 10);
      u[n++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      p += 4;
    }
  }
  return unitsToString(u, n);
}

function unitsToString(u: Uint16Array, n: number): string {
  // fromCharCode keeps lone surrogates (TextDecoder would replace them); chunks bound the argument count.
  if (n <= 8192) return String.fromCharCode.apply(null, u.subarray(0, n) as unknown as number[]);
  let s = '';
  for (let i = 0; i < n; i += 8192) {
    s += String.fromCharCode.apply(null, u.subarray(i, Math.min(n, i + 8192)) as unknown as number[]);
  }
  return s;
}

/** True when the bytes `b[start, end)` are the ASCII string `s`. @internal */
export function bytesEqual(b: Uint8Array, start: number, end: number, s: string): boolean {
  if (end - start !== s.length) return false;
  for (let k = 0; k < s.length; k++) if (b[start + k] !== s.charCodeAt(k)) return false;
  return true;
}

// Buffer#toString(enc, start, end) checks its arguments in JavaScript; the native slice is several
// times faster on the short lexemes of a float-heavy body.
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice(this: Buffer, start: number, end: number): string }).latin1Slice;

/** The bytes `b[start, end)` as a Latin-1 string (the native slice, without Buffer#toString's argument checks). @internal */
export function latin1(b: Uint8Array, start: number, end: number): string {
  // The view made here rather than by asBuffer(): one call fewer on the path of every float converted.
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return latin1Slice.call(buf, start, end);
}

/** `bytes` as a Buffer, for its native slices (a view of the same memory, not a copy). @internal */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
