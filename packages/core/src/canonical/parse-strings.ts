import { isUtf8 } from 'node:buffer';
import type { ParseState } from './parse-state.js';
import * as Tape from './tape.js';

// Byte classes inside a string: 0 plain ASCII, 1 quote, 2 backslash, 3 control, 4 non-ASCII, 5 DEL.
const STRING_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_CLASS[c] = 3;
STRING_CLASS[0x22] = 1;
STRING_CLASS[0x5c] = 2;
STRING_CLASS[0x7f] = 5;
for (let c = 0x80; c < 0x100; c++) STRING_CLASS[c] = 4;

// Value of a hex digit, or 255.
const HEX = new Uint8Array(256).fill(255);
for (let c = 0; c < 10; c++) HEX[0x30 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX[0x41 + c] = 10 + c;
  HEX[0x61 + c] = 10 + c;
}

const SIMPLE_ESCAPES = new Uint8Array(256);
for (const ch of '"\\/bfnrt') SIMPLE_ESCAPES[ch.charCodeAt(0)] = 1;

/** From this many bytes a run of text is validated natively (below, the call costs more than the walk). */
const NATIVE_UTF8_MIN = 32;

/**
 * Scans the string whose opening quote is at `s.pos` onto the tape, with its flags; leaves `s.pos`
 * after the closing quote.
 * @internal
 */
export function scanString(s: ParseState): void {
  const b = s.b;
  const n = s.n;
  const start = s.pos + 1;
  let p = start;
  let flags = 0;
  for (;;) {
    // Hot loop: plain ASCII runs.
    let cls = 0;
    while (p < n && (cls = STRING_CLASS[b[p]!]!) === 0) p++;
    if (p >= n) {
      s.pos = p;
      s.fail('Unterminated string');
    }
    if (cls === 1) break;
    if (cls === 2) {
      flags |= Tape.F_ESC;
      p = scanEscape(s, p);
    } else if (cls === 4) {
      flags |= Tape.F_NONASCII;
      p = utf8Run(s, p);
    } else if (cls === 5) {
      flags |= Tape.F_DEL;
      s.bound += 5; // ensure_ascii writes \u007f
      p++;
    } else {
      s.pos = p;
      s.fail('Invalid control character in string');
    }
  }
  s.pos = p + 1;
  const kind = Tape.T_STR | flags | s.surrogateFlags;
  s.features |= kind;
  // Escapes never grow in any profile; raw UTF-8-encoded surrogates read as three U+FFFD each
  // in the javascript profile (3 bytes → 9).
  s.bound += (kind & Tape.F_RAWSURR) === 0 ? p - start + 2 : 3 * (p - start) + 2;
  s.push(kind, start, p);
  s.surrogateFlags = 0;
}

/**
 * Validates the run of text from `p` (a byte >= 0x80) to the next quote, backslash or control
 * byte; returns where it ends. Long runs of non-ASCII text (any language but English) are checked
 * by the native UTF-8 validator; only a run it refuses is walked sequence by sequence, to accept
 * the UTF-8-encoded surrogates Python accepts (`surrogatepass`) or to report the bad byte.
 */
function utf8Run(s: ParseState, p: number): number {
  const b = s.b;
  const n = s.n;
  let q = p;
  let cls = 0;
  while (q < n && ((cls = STRING_CLASS[b[q]!]!) === 0 || cls === 4)) q++;
  if (q - p >= NATIVE_UTF8_MIN && isUtf8(b.subarray(p, q))) {
    // Valid UTF-8 has no surrogates. ensure_ascii writes at most 2 more bytes per byte beyond
    // ASCII; counting the run's ASCII bytes too keeps the bound an upper bound without a pass.
    s.bound += 2 * (q - p);
    return q;
  }
  while (p < q) p = b[p]! < 0x80 ? p + 1 : utf8(s, p);
  return p;
}

/** Validates one escape at `p` (a backslash); returns the position after it. */
function scanEscape(s: ParseState, p: number): number {
  const b = s.b;
  const e = b[p + 1];
  if (e === undefined) {
    s.pos = p;
    s.fail('Unterminated string');
  }
  if (SIMPLE_ESCAPES[e] === 1) return p + 2;
  if (e !== 0x75) {
    s.pos = p;
    s.fail('Invalid \\escape');
  }
  const unit = hex4(s, p + 2);
  if (unit >= 0xd800 && unit <= 0xdbff) {
    // Python joins a high-surrogate escape with an immediately following low-surrogate escape.
    if (b[p + 6] === 0x5c && b[p + 7] === 0x75) {
      const low = hex4Maybe(s, p + 8);
      if (low >= 0xdc00 && low <= 0xdfff) return p + 12;
    }
    s.surrogateFlags |= Tape.F_LONE;
  } else if (unit >= 0xdc00 && unit <= 0xdfff) {
    s.surrogateFlags |= Tape.F_LONE;
  }
  return p + 6;
}

function hex4(s: ParseState, p: number): number {
  const v = hex4Maybe(s, p);
  if (v < 0) {
    s.pos = p;
    s.fail('Invalid \\uXXXX escape');
  }
  return v;
}

function hex4Maybe(s: ParseState, p: number): number {
  const b = s.b;
  if (p + 4 > s.n) return -1;
  const h0 = HEX[b[p]!]!;
  const h1 = HEX[b[p + 1]!]!;
  const h2 = HEX[b[p + 2]!]!;
  const h3 = HEX[b[p + 3]!]!;
  if ((h0 | h1 | h2 | h3) > 15) return -1;
  return (h0 << 12) | (h1 << 8) | (h2 << 4) | h3;
}

/** Validates one UTF-8 sequence at `p` as Python's decoder with `surrogatepass` does. */
function utf8(s: ParseState, p: number): number {
  const b = s.b;
  const c0 = b[p]!;
  const c1 = b[p + 1] ?? 0;
  // ensure_ascii writes each code point as \uXXXX, an astral one as two: 2 bytes → 6, 3 → 6, 4 → 12.
  if (c0 >= 0xc2 && c0 <= 0xdf) {
    if ((c1 & 0xc0) === 0x80) {
      s.bound += 4;
      return p + 2;
    }
  } else if (c0 >= 0xe0 && c0 <= 0xef) {
    const c2 = b[p + 2] ?? 0;
    const lo = c0 === 0xe0 ? 0xa0 : 0x80;
    if (c1 >= lo && c1 <= 0xbf && (c2 & 0xc0) === 0x80) {
      if (c0 === 0xed && c1 >= 0xa0) s.surrogateFlags |= Tape.F_RAWSURR | Tape.F_LONE;
      s.bound += 3;
      return p + 3;
    }
  } else if (c0 >= 0xf0 && c0 <= 0xf4) {
    const c2 = b[p + 2] ?? 0;
    const c3 = b[p + 3] ?? 0;
    const lo = c0 === 0xf0 ? 0x90 : 0x80;
    const hi = c0 === 0xf4 ? 0x8f : 0xbf;
    if (c1 >= lo && c1 <= hi && (c2 & 0xc0) === 0x80 && (c3 & 0xc0) === 0x80) {
      s.bound += 8;
      return p + 4;
    }
  }
  s.pos = p;
  return s.fail('Invalid UTF-8 in string');
}
