import type { ByteWriter } from './byte-writer.js';
import { hex4, UNESCAPE } from './strings.js';

/**
 * Writes tape strings in Python's escaping straight from the body bytes, without making JavaScript
 * strings: `ensure_ascii=False` escapes `"`, `\` and control characters (short forms, else `\u00XX`
 * in lowercase hex); `ensure_ascii=True` also escapes DEL and every non-ASCII code point (astral ones
 * as a surrogate pair). Escapes in the body are decoded first, as `json.loads` does.
 * Strings were validated by the parser, and a UTF-8 writer is never given one with a lone surrogate.
 * @internal
 */

const HEX_DIGITS = [0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66];

/**
 * Python's short escape letter for an ASCII unit, or 0 when it has none: the one-letter JSON escapes
 * read backwards, except `\/`, which Python never writes.
 */
const SHORT_ESCAPE = new Uint8Array(128);
UNESCAPE.forEach((unit, letter) => {
  if (unit !== 0 && letter !== 0x2f) SHORT_ESCAPE[unit] = letter;
});

function writeUnitEscape(w: ByteWriter, u: number): void {
  w.ensure(6);
  const buf = w.buf;
  let p = w.pos;
  buf[p++] = 0x5c;
  buf[p++] = 0x75;
  buf[p++] = HEX_DIGITS[(u >> 12) & 15]!;
  buf[p++] = HEX_DIGITS[(u >> 8) & 15]!;
  buf[p++] = HEX_DIGITS[(u >> 4) & 15]!;
  buf[p++] = HEX_DIGITS[u & 15]!;
  w.pos = p;
}

function writeCodePoint(w: ByteWriter, cp: number, ascii: boolean): void {
  if (cp < 0x80) {
    const short = SHORT_ESCAPE[cp]!;
    if (short !== 0) {
      w.byte(0x5c);
      w.byte(short);
    } else if (cp < 0x20 || (ascii && cp === 0x7f)) {
      writeUnitEscape(w, cp);
    } else {
      w.byte(cp);
    }
  } else if (ascii) {
    if (cp >= 0x10000) {
      const v = cp - 0x10000;
      writeUnitEscape(w, 0xd800 + (v >> 10));
      writeUnitEscape(w, 0xdc00 + (v & 0x3ff));
    } else {
      writeUnitEscape(w, cp);
    }
  } else {
    w.ensure(4);
    const buf = w.buf;
    let p = w.pos;
    if (cp < 0x800) {
      buf[p++] = 0xc0 | (cp >> 6);
      buf[p++] = 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      buf[p++] = 0xe0 | (cp >> 12);
      buf[p++] = 0x80 | ((cp >> 6) & 0x3f);
      buf[p++] = 0x80 | (cp & 0x3f);
    } else {
      buf[p++] = 0xf0 | (cp >> 18);
      buf[p++] = 0x80 | ((cp >> 12) & 0x3f);
      buf[p++] = 0x80 | ((cp >> 6) & 0x3f);
      buf[p++] = 0x80 | (cp & 0x3f);
    }
    w.pos = p;
  }
}

/**
 * Writes the string `b[start, end)` (the bytes between its quotes), quotes included.
 * @internal
 */
export function writePythonString(w: ByteWriter, b: Uint8Array, start: number, end: number, ascii: boolean): void {
  w.byte(0x22);
  let run = start;
  let p = start;
  while (p < end) {
    const c = b[p]!;
    if (c === 0x5c) {
      if (p > run) w.copy(b, run, p);
      const e = b[p + 1]!;
      if (e !== 0x75) {
        writeCodePoint(w, UNESCAPE[e]!, ascii);
        p += 2;
      } else {
        let cp = hex4(b, p + 2);
        p += 6;
        // json.loads joins a high-surrogate escape with an immediately following low-surrogate escape.
        if (cp >= 0xd800 && cp <= 0xdbff && b[p] === 0x5c && b[p + 1] === 0x75 && p + 6 <= end) {
          const low = hex4(b, p + 2);
          if (low >= 0xdc00 && low <= 0xdfff) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            p += 6;
          }
        }
        writeCodePoint(w, cp, ascii);
      }
      run = p;
    } else if (c >= 0x80 && ascii) {
      if (p > run) w.copy(b, run, p);
      let cp: number;
      if (c < 0xe0) {
        cp = ((c & 0x1f) << 6) | (b[p + 1]! & 0x3f);
        p += 2;
      } else if (c < 0xf0) {
        cp = ((c & 0x0f) << 12) | ((b[p + 1]! & 0x3f) << 6) | (b[p + 2]! & 0x3f);
        p += 3;
      } else {
        cp = ((c & 0x07) << 18) | ((b[p + 1]! & 0x3f) << 12) | ((b[p + 2]! & 0x3f) << 6) | (b[p + 3]! & 0x3f);
        p += 4;
      }
      writeCodePoint(w, cp, true);
      run = p;
    } else if (c === 0x7f && ascii) {
      if (p > run) w.copy(b, run, p);
      writeUnitEscape(w, 0x7f);
      run = ++p;
    } else {
      // Raw ASCII (never a quote, backslash or control: the parser refused those) or, when writing
      // UTF-8, valid UTF-8 without surrogates: already in canonical form.
      p++;
    }
  }
  if (p > run) w.copy(b, run, p);
  w.byte(0x22);
}
