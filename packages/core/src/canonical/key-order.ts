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

/** Code units from U+D800 up: the only ones where UTF-16 order and code-point order can disagree. */
const HIGH_UNITS = /[\uD800-\uFFFF]/;

/**
 * Positions of `keys` in Python's `sorted(dict)` order, each key once at the position of its last
 * occurrence (a dict keeps the last value). The keys must be well-formed (no lone surrogate, which
 * {@link compareKeys} orders through code points). Where no key holds a unit from U+D800 up, UTF-16
 * order is code-point order and the engine's `<` compares.
 * @internal
 */
export function codePointOrder(keys: readonly string[]): number[] {
  const count = keys.length;
  let high = false;
  for (let m = 0; m < count && !high; m++) high = HIGH_UNITS.test(keys[m]!);
  const positions = new Array<number>(count);
  for (let m = 0; m < count; m++) positions[m] = m;
  // Ties go by position, so the last of equal keys ends its run.
  positions.sort(
    high
      ? (a, b) => compareCodePointOrder(keys[a]!, keys[b]!) || a - b
      : (a, b) => {
          const x = keys[a]!;
          const y = keys[b]!;
          return x < y ? -1 : x > y ? 1 : a - b;
        },
  );
  const order: number[] = [];
  for (let m = 0; m < count; m++) {
    const next = positions[m + 1];
    if (next === undefined || keys[next] !== keys[positions[m]!]) order.push(positions[m]!);
  }
  return order;
}
