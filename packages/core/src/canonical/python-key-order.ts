import { sharedKeyCache } from './ascii-key-cache.js';
import { codePointOrder, compareKeys, type SortKey } from './key-order.js';
import { decodeCodePoints, decodeString } from './strings.js';
import * as Tape from './tape.js';

/**
 * The member order of an object in a Python-family profile: code-point order of the keys, the last
 * of equal keys kept (`sort_keys=True`), or first-seen order (a dict's), each member with its last
 * value. Orders are positions in the object's list of member key indices, as the walker gathered them.
 */

/**
 * Member positions in output order for the object whose `count` member keys are at `keyIndex`
 * (tape indices), at `depth`; `asciiKeys` when no key has an escape or a non-ASCII byte.
 * @internal
 */
export function pythonKeyOrder(
  b: Buffer,
  tape: Int32Array,
  keyIndex: Int32Array,
  count: number,
  depth: number,
  sortKeys: boolean,
  asciiKeys: boolean,
): readonly number[] {
  return asciiKeys && sortKeys ? asciiKeyOrder(b, tape, keyIndex, count, depth) : generalKeyOrder(b, tape, keyIndex, count, sortKeys);
}

/** Forgets the shapes of the body written last: its positions mean nothing in another body, and would keep it alive. @internal */
export function forgetShapes(): void {
  SHAPES.length = 0;
}

/** The last ASCII-keyed object written at a depth: where its keys are, and its member order. */
interface Shape {
  readonly bytes: Buffer;
  readonly count: number;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly order: readonly number[];
}

/**
 * Per depth, the last object shape written there, so arrays of same-shaped objects sort their keys
 * once. Kept only within one body (the positions point into it); process-wide otherwise, since
 * serialization is synchronous.
 */
const SHAPES: (Shape | undefined)[] = [];

/**
 * Member positions in output order for an object of ASCII keys, where `<` is code-point order.
 * Arrays of same-shaped objects are the bulk of large payloads, so the order of the last object
 * seen at this depth is reused when its keys are the same bytes (compared in place, no strings made).
 */
function asciiKeyOrder(b: Buffer, tape: Int32Array, keyIndex: Int32Array, count: number, depth: number): readonly number[] {
  const last = SHAPES[depth];
  if (last !== undefined && last.bytes === b && last.count === count) {
    let same = true;
    for (let m = 0; m < count && same; m++) {
      const k = keyIndex[m]!;
      const start = tape[k + 1]!;
      const len = tape[k + 2]! - start;
      const lastStart = last.starts[m]!;
      if (last.ends[m]! - lastStart !== len) {
        same = false;
        break;
      }
      if (start === lastStart) continue;
      for (let x = 0; x < len; x++) {
        if (b[start + x] !== b[lastStart + x]) {
          same = false;
          break;
        }
      }
    }
    if (same) return last.order;
  }
  const keys = new Array<string>(count);
  for (let m = 0; m < count; m++) {
    const k = keyIndex[m]!;
    keys[m] = sharedKeyCache.get(b, tape[k + 1]!, tape[k + 2]!);
  }
  let order: number[];
  if (count <= 24) {
    const positions = new Array<number>(count);
    for (let m = 0; m < count; m++) positions[m] = m;
    // Insertion sort: objects are small, and this beats Array.prototype.sort's comparator calls.
    for (let m = 1; m < count; m++) {
      const pos = positions[m]!;
      const key = keys[pos]!;
      let at = m - 1;
      while (at >= 0 && keys[positions[at]!]! > key) {
        positions[at + 1] = positions[at]!;
        at--;
      }
      positions[at + 1] = pos;
    }
    order = [];
    for (let m = 0; m < count; m++) {
      const next = positions[m + 1];
      if (next === undefined || keys[next] !== keys[positions[m]!]) order.push(positions[m]!);
    }
  } else {
    order = codePointOrder(keys);
  }
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);
  for (let m = 0; m < count; m++) {
    const k = keyIndex[m]!;
    starts[m] = tape[k + 1]!;
    ends[m] = tape[k + 2]!;
  }
  SHAPES[depth] = { bytes: b, count, starts, ends, order };
  return order;
}

/** Member positions in output order, for any keys and both key orders. */
function generalKeyOrder(b: Buffer, tape: Int32Array, keyIndex: Int32Array, count: number, sortKeys: boolean): readonly number[] {
  if (sortKeys && count > 24) {
    let lone = false;
    for (let m = 0; m < count && !lone; m++) lone = (tape[keyIndex[m]!]! & Tape.F_LONE) !== 0;
    if (!lone) {
      const keys = new Array<string>(count);
      for (let m = 0; m < count; m++) {
        const k = keyIndex[m]!;
        keys[m] = decodeString(b, tape[k]!, tape[k + 1]!, tape[k + 2]!);
      }
      return codePointOrder(keys);
    }
  }
  const members = new Array<SortKey>(count);
  let increasing = true;
  for (let m = 0; m < count; m++) {
    members[m] = sortKey(b, tape, keyIndex[m]!, m);
    if (increasing && m > 0 && compareKeys(members[m - 1]!, members[m]!) >= 0) increasing = false;
  }
  const ordered = sortKeys ? sortMembers(members, increasing) : firstSeenOrder(members, increasing);
  return ordered.map((member) => member.position);
}

function sortKey(b: Buffer, tape: Int32Array, i: number, position: number): SortKey {
  const kind = tape[i]!;
  const start = tape[i + 1]!;
  const end = tape[i + 2]!;
  if ((kind & Tape.F_LONE) !== 0) {
    // JavaScript strings cannot tell a Python lone-surrogate pair from a real astral character.
    const cps = decodeCodePoints(b, start, end);
    return { position, text: '', ascii: false, codePoints: cps };
  }
  const text = decodeString(b, kind, start, end);
  return { position, text, ascii: (kind & (Tape.F_ESC | Tape.F_NONASCII)) === 0, codePoints: undefined };
}

/** Members in key order, the last of equal keys kept (as a Python dict keeps the last value). */
function sortMembers(members: SortKey[], alreadySorted: boolean): SortKey[] {
  if (alreadySorted) return members; // strictly increasing, so no duplicates either
  // Array.prototype.sort is stable, so among equal keys the last in the body stays last.
  members.sort(compareKeys);
  const out: SortKey[] = [];
  for (let m = 0; m < members.length; m++) {
    const next = members[m + 1];
    if (next === undefined || compareKeys(members[m]!, next) !== 0) out.push(members[m]!);
  }
  return out;
}

/** Members in first-seen key order, each with the index of its last value (a Python dict's order). */
function firstSeenOrder(members: SortKey[], strictlyIncreasing: boolean): SortKey[] {
  if (strictlyIncreasing) return members;
  const byKey = new Map<string, number>();
  const out: SortKey[] = [];
  for (const member of members) {
    const id = member.codePoints === undefined ? member.text : `\u0000cp:${member.codePoints.join(',')}`;
    const at = byKey.get(id);
    if (at === undefined) {
      byKey.set(id, out.length);
      out.push(member);
    } else {
      out[at] = { ...out[at]!, position: member.position };
    }
  }
  return out;
}
