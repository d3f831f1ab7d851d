/**
 * Python sorts dict keys by code point; JavaScript's `<` compares UTF-16 units. The two agree except
 * where a unit >= 0xD800 meets another: an astral character (units D800-DBFF, DC00-DFFF) sorts after
 * U+E000-U+FFFF by code point but before them by unit.
 */

/** An object member's key, ready to be ordered. @internal */
export interface SortKey {
  /** Position of the member in its object, in body order. */
  readonly position: number;
  /** The decoded key (empty when `codePoints` is set). */
  readonly text: string;
  /** True when the key is pure ASCII, so `<` is exact. */
  readonly ascii: boolean;
  /** Python code points, for keys holding lone surrogates. */
  readonly codePoints: readonly number[] | undefined;
}

function isHigh(u: number): boolean {
  return u >= 0xd800 && u <= 0xdbff;
}

function isLow(u: number): boolean {
  return u >= 0xdc00 && u <= 0xdfff;
}

/** Compares two well-formed-or-not JavaScript strings by Unicode code point. @internal */
export function compareCodePointOrder(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 || y < 0xd800) return x - y;
    // The units before i are equal; if they end in a high surrogate, the code point starts there.
    if (i > 0) {
      const h = a.charCodeAt(i - 1);
      if (isHigh(h) && (isLow(x) || isLow(y))) {
        const cx = isLow(x) ? 0x10000 + ((h - 0xd800) << 10) + (x - 0xdc00) : h;
        const cy = isLow(y) ? 0x10000 + ((h - 0xd800) << 10) + (y - 0xdc00) : h;
        if (cx !== cy) return cx - cy;
      }
    }
    return a.codePointAt(i)! - b.codePointAt(i)!;
  }
  return a.length - b.length;
}

function toCodePoints(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0)!);
  return out;
}

function compareArrays(a: readonly number[], b: readonly number[]): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}

/** Orders two member keys as Python's `sorted(dict)` does. @internal */
export function compareKeys(a: SortKey, b: SortKey): number {
  if (a.codePoints !== undefined || b.codePoints !== undefined) {
    return compareArrays(a.codePoints ?? toCodePoints(a.text), b.codePoints ?? toCodePoints(b.text));
  }
  if (a.ascii && b.ascii) return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  return compareCodePointOrder(a.text, b.text);
}
