import type { ByteWriter } from './byte-writer.js';
import type { FloatConversions } from './float-format.js';
import type { KeyOrderTable } from './shared-key-orders.js';
import { bytesEqual, decodeString } from './strings.js';
import * as Tape from './tape.js';

/**
 * What the javascript profile writes its own way. The profile is the recipe of the service's Node.js
 * documentation, taken literally as the reference: `JSON.stringify(sortKeysDeep(JSON.parse(body)),
 * null, 2)` where `sortKeysDeep` rebuilds each object from `Object.keys(o).sort()` by plain
 * assignment. Its quirks are the profile: integer-like keys come first in numeric order (JavaScript
 * objects order them so), numbers are doubles (`1.0` prints `1`, big integers round, an overflow
 * prints `null`), a duplicate key keeps its first place and last value, and a `__proto__` key is
 * lost (the assignment sets the prototype instead).
 *
 * The walker (`tape-writer.ts`) writes it over the parse like the other profiles, value by value, so
 * its cost and memory are theirs rather than those of a whole `JSON.parse` object graph and one
 * `JSON.stringify` string; these are the parts where it differs.
 */

/** Largest array index + 1: keys of integers up to 2^32 - 2 are "array index" keys, ordered first. */
const MAX_INDEX = 2 ** 32 - 2;

function arrayIndex(key: string): number {
  const n = key.length;
  if (n === 0 || n > 10) return -1;
  const c0 = key.charCodeAt(0);
  if (c0 === 0x30) return n === 1 ? 0 : -1;
  if (c0 < 0x31 || c0 > 0x39) return -1;
  for (let i = 1; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
  }
  const v = Number(key);
  return v <= MAX_INDEX ? v : -1;
}

const byUtf16 = (a: Member, b: Member): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

interface Member {
  readonly key: string;
  /** Tape index of the member's last value. */
  valueAt: number;
}

/** The string `kind` at `b[start, end)` as JSON.parse reads it from the UTF-8 text of the body. @internal */
export function decodeJavaScript(b: Buffer, kind: number, start: number, end: number): string {
  if ((kind & Tape.F_RAWSURR) !== 0) {
    // Decoding the body as UTF-8 turns each byte of an encoded surrogate into U+FFFD.
    return JSON.parse(b.toString('utf8', start - 1, end + 1)) as string;
  }
  return decodeString(b, kind, start, end);
}

/**
 * The number `b[start, end)` as `JSON.stringify` writes the double it reads as: `String(x)` for a
 * finite one (-0 as "0"), `null` for an overflow to ±Infinity.
 * @internal
 */
export function writeJavaScriptNumber(w: ByteWriter, b: Buffer, start: number, end: number, conversions: FloatConversions): void {
  const shortest = conversions.shortest(b, start, end);
  w.ascii(shortest === 'Infinity' || shortest === '-Infinity' ? 'null' : shortest);
}

/**
 * Where the entry of the object at `i` is in `codePoint` (the order an earlier Python-family form
 * sorted it in) when that order is this profile's too: every key {@link isPlainKey}. Otherwise -1.
 * @internal
 */
export function plainKeyOrder(b: Buffer, tape: Int32Array, codePoint: KeyOrderTable, i: number): number {
  const at = codePoint.find(i);
  if (at < 0) return -1;
  const data = codePoint.data;
  const kept = data[at]!;
  for (let m = 0; m < kept; m++) if (!isPlainKey(b, tape, data[at + 1 + m]!)) return -1;
  return at;
}

/**
 * Whether the key at tape index `k` is plain ASCII with no escape, not `__proto__` and not starting
 * with a digit (so no array index): a key `JSON.stringify` writes as its body bytes, that sorts
 * among such keys by code point, and that Python writes alike.
 * @internal
 */
export function isPlainKey(b: Uint8Array, tape: Int32Array, k: number): boolean {
  if ((tape[k]! & (Tape.F_ESC | Tape.F_NONASCII)) !== 0) return false;
  const start = tape[k + 1]!;
  const c = b[start];
  if (c !== undefined && c >= 0x30 && c <= 0x39) return false;
  return !bytesEqual(b, start, tape[k + 2]!, '__proto__');
}

/**
 * The keys of the object at `i` (`count` members) as `sortKeysDeep` rebuilds it, each as the tape
 * index of the key of its member's last value: array-index keys in numeric order, then the others
 * in the order `Object.keys(o).sort()` assigned them (UTF-16 code units); `__proto__` is not an own
 * key. `codePoint`, when given, holds the orders earlier Python-family forms of this body sorted
 * objects in (its keys decode here as there: no lone or raw surrogates in the body).
 * @internal
 */
export function javascriptKeyOrder(b: Buffer, tape: Int32Array, i: number, count: number, codePoint: KeyOrderTable | undefined): number[] {
  const at = codePoint === undefined ? -1 : codePoint.find(i);
  let members: Iterable<Member>;
  if (at >= 0) {
    // One member per key with its last value, in code-point order.
    const data = codePoint!.data;
    const kept = data[at]!;
    const sorted = new Array<Member>(kept);
    for (let m = 0; m < kept; m++) {
      const k = data[at + 1 + m]!;
      sorted[m] = { key: decodeJavaScript(b, tape[k]!, tape[k + 1]!, tape[k + 2]!), valueAt: k + 3 };
    }
    members = sorted;
  } else {
    // JSON.parse: one property per key, in first-seen place, holding the last value.
    const byKey = new Map<string, Member>();
    let j = i + 3;
    for (let m = 0; m < count; m++) {
      const key = decodeJavaScript(b, tape[j]!, tape[j + 1]!, tape[j + 2]!);
      const v = j + 3;
      const member = byKey.get(key);
      if (member === undefined) byKey.set(key, { key, valueAt: v });
      else member.valueAt = v;
      j = Tape.indexAfter(tape, v);
    }
    members = byKey.values();
  }
  const indexed: { index: number; member: Member }[] = [];
  const named: Member[] = [];
  for (const member of members) {
    if (member.key === '__proto__') continue;
    const index = arrayIndex(member.key);
    if (index >= 0) indexed.push({ index, member });
    else named.push(member);
  }
  indexed.sort((x, y) => x.index - y.index);
  // UTF-16 order (`<`). From code-point order only astral keys against U+E000-U+FFFF move, so the
  // engine's merge sort meets long sorted runs and compares about once per key.
  named.sort(byUtf16);
  const keys = new Array<number>(indexed.length + named.length);
  let n = 0;
  for (const { member } of indexed) keys[n++] = member.valueAt - 3;
  for (const member of named) keys[n++] = member.valueAt - 3;
  return keys;
}
