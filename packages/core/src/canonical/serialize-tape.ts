import { JobhookError } from '../errors.js';
import { ByteWriter } from './byte-writer.js';
import { lastLexemeConverted, pythonLayout, ryuLayout, writeFloatLexeme } from './float-digits.js';
import { FloatPass, type FloatLayout, type FloatMode } from './float-format.js';
import { RepeatedFloat } from './repeated-float.js';
import { sharedKeyCache } from './ascii-key-cache.js';
import { codePointOrder, compareKeys, type SortKey } from './key-order.js';
import { ordersFor, type KeyOrderTable, type SharedKeyOrders } from './shared-key-orders.js';
import type { WorkBudget } from './work-budget.js';
import { decodeCodePoints, decodeString, latin1 } from './strings.js';
import { writePythonString } from './string-writer.js';
import {
  F_DEL,
  F_ESC,
  F_FLT_LAYOUT,
  F_FLT_REPR,
  F_LONE,
  F_NONASCII,
  T_ARR,
  T_FALSE,
  T_FLT,
  T_INF,
  T_INT,
  T_NAN,
  T_NINF,
  T_NULL,
  T_OBJ,
  T_STR,
  T_TRUE,
  TYPE_MASK,
  type ParsedBody,
} from './tape.js';

/** How a Python-family profile writes values. @internal */
export interface TapeProfile {
  readonly name: string;
  /** `ensure_ascii=True`: escape DEL and everything non-ASCII. */
  readonly ascii: boolean;
  /** Float layout. */
  readonly floatLayout: FloatLayout;
  /** How NaN and the infinities are written. */
  readonly nonFinite: { nan: string; inf: string; ninf: string };
  /** orjson refuses integers outside [-2^63, 2^64 - 1]. */
  readonly int64Only: boolean;
  /** orjson refuses more than 255 nested containers. */
  readonly maxDepth: number;
  /** Keys in code-point order (`sort_keys=True`); otherwise in first-seen order, as a Python dict keeps them. */
  readonly sortKeys: boolean;
  /** Spaces per level, or `null` for one line (`indent=None`). */
  readonly indent: number | null;
  /** Between items: `","` when indenting, `", "` for `json.dumps` defaults. */
  readonly itemSeparator: string;
  /** Between key and value. */
  readonly keySeparator: string;
}

/** `json.dumps(v, sort_keys=True, indent=2, ensure_ascii=False)`. @internal */
export const PYTHON_PROFILE: TapeProfile = {
  name: 'python',
  ascii: false,
  floatLayout: pythonLayout,
  nonFinite: { nan: 'NaN', inf: 'Infinity', ninf: '-Infinity' },
  int64Only: false,
  maxDepth: Number.POSITIVE_INFINITY,
  sortKeys: true,
  indent: 2,
  itemSeparator: ',',
  keySeparator: ': ',
};

/** `json.dumps(v, sort_keys=True, indent=2, ensure_ascii=True)`. @internal */
export const PYTHON_ASCII_PROFILE: TapeProfile = { ...PYTHON_PROFILE, name: 'python-ascii', ascii: true };

/** `orjson.dumps(v, option=OPT_INDENT_2 | OPT_SORT_KEYS)` as of orjson 3.x (Ryu floats, NaN/Infinity as null). @internal */
export const ORJSON_PROFILE: TapeProfile = {
  name: 'orjson',
  ascii: false,
  floatLayout: ryuLayout,
  nonFinite: { nan: 'null', inf: 'null', ninf: 'null' },
  int64Only: true,
  maxDepth: 255,
  sortKeys: true,
  indent: 2,
  itemSeparator: ',',
  keySeparator: ': ',
};

/** `json.dumps(v)` with Python's defaults: one line, `", "` and `": "`, ASCII escapes, keys unsorted. @internal */
export const PYTHON_DEFAULT_DUMPS: TapeProfile = {
  ...PYTHON_PROFILE,
  name: 'python-default',
  ascii: true,
  sortKeys: false,
  indent: null,
  itemSeparator: ', ',
  keySeparator: ': ',
};

/** `json.dumps(v, separators=(",", ":"), ensure_ascii=False)`: compact, keys unsorted. @internal */
export const PYTHON_COMPACT_DUMPS: TapeProfile = {
  ...PYTHON_PROFILE,
  name: 'python-compact',
  sortKeys: false,
  indent: null,
  itemSeparator: ',',
  keySeparator: ':',
};

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * Writes a parsed body in a Python-family canonical profile: keys in code-point order with the last
 * duplicate winning, two-space indentation, `", "`-free separators (`","` + newline and `": "`).
 * @throws JobhookError `ERR_CANONICAL_UNREPRESENTABLE` when the profile's reference would raise.
 * @internal
 */
export function serializeTape(doc: ParsedBody, profile: TapeProfile, floatMode: FloatMode = 'exact', orders?: SharedKeyOrders): Buffer {
  const writer = new ByteWriter(doc.bytes.length + (doc.bytes.length >> 1));
  writeTape(doc, profile, floatMode, writer, orders, new FloatPass());
  return writer.result();
}

/**
 * The lowercase SHA-256 hex of {@link serializeTape}'s bytes, hashed as they are written: memory
 * stays one 64 KiB window whatever the canonical size. `orders` (of this `doc`) share each object's
 * key order with the other forms written with them; `budget` is charged every byte written; `pass`
 * (a new {@link FloatPass} by default) tells the caller afterwards whether floats were approximated.
 * @throws WorkBudgetExhausted when `budget` runs out.
 * @internal
 */
export function digestTape(
  doc: ParsedBody,
  profile: TapeProfile,
  floatMode: FloatMode,
  orders?: SharedKeyOrders,
  budget?: WorkBudget,
  pass: FloatPass = new FloatPass(),
): string {
  const writer = new ByteWriter(0, HASH_WINDOW, budget);
  writeTape(doc, profile, floatMode, writer, orders, pass);
  return writer.digestHex();
}

/** The last float of the pass being written: serialization is synchronous, so one serves every pass. */
const REPEATED = new RepeatedFloat();

/** Lexeme bytes up to which {@link RepeatedFloat} reserves room, so a float's form is in one piece of the window. */
const REPEATED_ROOM = 32;

/** The window of {@link digestTape}: serialization is synchronous, so one serves every call. */
const HASH_WINDOW = Buffer.allocUnsafe(64 * 1024);

function writeTape(
  doc: ParsedBody,
  profile: TapeProfile,
  floatMode: FloatMode,
  writer: ByteWriter,
  orders: SharedKeyOrders | undefined,
  pass: FloatPass,
): void {
  if (doc.depth > profile.maxDepth) {
    unrepresentable(profile, `more than ${profile.maxDepth} nested containers`);
  }
  const bytes = doc.bytes;
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  SHAPES.length = 0; // positions of another body mean nothing here, and would keep it alive
  REPEATED.reset();
  const table = profile.sortKeys ? ordersFor(orders, doc, 'codePoint') : undefined;
  new TapeSerializer(buf, doc.tape, writer, profile, floatMode, table, pass).value(0, 0);
  SHAPES.length = 0;
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

function unrepresentable(profile: TapeProfile, why: string): never {
  throw new JobhookError('ERR_CANONICAL_UNREPRESENTABLE', `the ${profile.name} profile cannot represent ${why}`);
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
 * once. Kept only within one body (the positions point into it).
 */
const SHAPES: (Shape | undefined)[] = [];

/** Per depth, a reusable array of member key positions (serialization is synchronous and depth-first). */
const KEY_INDEX: Int32Array[] = [];

function keyIndexScratch(depth: number, count: number): Int32Array {
  let scratch = KEY_INDEX[depth];
  if (scratch === undefined || scratch.length < count) {
    scratch = new Int32Array(Math.max(16, count));
    KEY_INDEX[depth] = scratch;
  }
  return scratch;
}

class TapeSerializer {
  private readonly keys = sharedKeyCache;
  private readonly repeated = REPEATED;

  constructor(
    private readonly b: Buffer,
    private readonly tape: Int32Array,
    private readonly w: ByteWriter,
    private readonly profile: TapeProfile,
    private readonly floatMode: FloatMode,
    private readonly orders: KeyOrderTable | undefined,
    /** This pass's float state (a new pass starts from the same state, so a form written twice is the same bytes). */
    private readonly pass: FloatPass,
  ) {}

  /** Writes the value at tape index `i`; returns the index after it. */
  value(i: number, depth: number): number {
    const tape = this.tape;
    const kind = tape[i]!;
    switch (kind & TYPE_MASK) {
      case T_OBJ:
        return this.object(i, depth);
      case T_ARR:
        return this.array(i, depth);
      case T_STR:
        this.string(kind, tape[i + 1]!, tape[i + 2]!);
        return i + 3;
      case T_INT:
        this.integer(tape[i + 1]!, tape[i + 2]!);
        return i + 3;
      case T_FLT:
        if ((kind & F_FLT_REPR) !== 0) {
          this.w.copy(this.b, tape[i + 1]!, tape[i + 2]!);
        } else if ((kind & F_FLT_LAYOUT) !== 0) {
          this.layoutFloat(tape[i + 1]!, tape[i + 2]!);
        } else {
          this.float(tape[i + 1]!, tape[i + 2]!);
        }
        return i + 3;
      case T_TRUE:
        this.w.ascii('true');
        return i + 3;
      case T_FALSE:
        this.w.ascii('false');
        return i + 3;
      case T_NULL:
        this.w.ascii('null');
        return i + 3;
      case T_NAN:
        this.w.ascii(this.profile.nonFinite.nan);
        return i + 3;
      case T_INF:
        this.w.ascii(this.profile.nonFinite.inf);
        return i + 3;
      case T_NINF:
        this.w.ascii(this.profile.nonFinite.ninf);
        return i + 3;
      default:
        throw new Error(`jobhook: corrupt tape kind ${kind} at ${i}`);
    }
  }

  private array(i: number, depth: number): number {
    const tape = this.tape;
    const count = tape[i + 1]!;
    const w = this.w;
    if (count === 0) {
      w.ascii('[]');
      return tape[i + 2]!;
    }
    w.byte(0x5b);
    let j = i + 3;
    for (let m = 0; m < count; m++) {
      if (m > 0) w.ascii(this.profile.itemSeparator);
      this.newline(depth + 1);
      j = this.value(j, depth + 1);
    }
    this.newline(depth);
    w.byte(0x5d);
    return tape[i + 2]!;
  }

  private object(i: number, depth: number): number {
    const tape = this.tape;
    const count = tape[i + 1]!;
    const w = this.w;
    const after = tape[i + 2]!;
    if (count === 0) {
      w.ascii('{}');
      return after;
    }
    const profile = this.profile;
    const orders = this.orders;
    const known = orders === undefined ? -1 : orders.find(i);
    if (known >= 0) {
      // Sorted by an earlier form of this body: the entry holds the key indices in output order.
      const data = orders!.data;
      const kept = data[known]!;
      w.byte(0x7b);
      for (let m = 0; m < kept; m++) this.member(data[known + 1 + m]!, m, depth);
      this.newline(depth);
      w.byte(0x7d);
      return after;
    }
    const keyIndex = keyIndexScratch(depth, count);
    let asciiKeys = true;
    let j = i + 3;
    for (let m = 0; m < count; m++) {
      keyIndex[m] = j;
      if ((tape[j]! & (F_ESC | F_NONASCII)) !== 0) asciiKeys = false;
      const v = j + 3;
      const kind = tape[v]! & TYPE_MASK;
      j = kind === T_OBJ || kind === T_ARR ? tape[v + 2]! : v + 3;
    }
    const order = asciiKeys && profile.sortKeys ? this.asciiKeyOrder(keyIndex, count, depth) : this.generalKeyOrder(keyIndex, count);
    orders?.store(i, keyIndex, order);
    w.byte(0x7b);
    for (let m = 0; m < order.length; m++) this.member(keyIndex[order[m]!]!, m, depth);
    this.newline(depth);
    w.byte(0x7d);
    return after;
  }

  /** Writes the `m`-th member written of an object at `depth`, whose key is at tape index `k`. */
  private member(k: number, m: number, depth: number): void {
    const tape = this.tape;
    const w = this.w;
    if (m > 0) w.ascii(this.profile.itemSeparator);
    this.newline(depth + 1);
    this.string(tape[k]!, tape[k + 1]!, tape[k + 2]!);
    w.ascii(this.profile.keySeparator);
    this.value(k + 3, depth + 1);
  }

  /**
   * Member positions in output order for an object of ASCII keys, where `<` is code-point order.
   * Arrays of same-shaped objects are the bulk of large payloads, so the order of the last object
   * seen at this depth is reused when its keys are the same bytes (compared in place, no strings made).
   */
  private asciiKeyOrder(keyIndex: Int32Array, count: number, depth: number): readonly number[] {
    const tape = this.tape;
    const b = this.b;
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
      keys[m] = this.keys.get(b, tape[k + 1]!, tape[k + 2]!);
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
  private generalKeyOrder(keyIndex: Int32Array, count: number): readonly number[] {
    const tape = this.tape;
    if (this.profile.sortKeys && count > 24) {
      let lone = false;
      for (let m = 0; m < count && !lone; m++) lone = (tape[keyIndex[m]!]! & F_LONE) !== 0;
      if (!lone) {
        const keys = new Array<string>(count);
        for (let m = 0; m < count; m++) {
          const k = keyIndex[m]!;
          keys[m] = decodeString(this.b, tape[k]!, tape[k + 1]!, tape[k + 2]!);
        }
        return codePointOrder(keys);
      }
    }
    const members = new Array<SortKey>(count);
    let increasing = true;
    for (let m = 0; m < count; m++) {
      members[m] = this.sortKey(keyIndex[m]!, m);
      if (increasing && m > 0 && compareKeys(members[m - 1]!, members[m]!) >= 0) increasing = false;
    }
    const ordered = this.profile.sortKeys ? sortMembers(members, increasing) : firstSeenOrder(members, increasing);
    return ordered.map((member) => member.position);
  }

  private newline(depth: number): void {
    const indent = this.profile.indent;
    if (indent === 2) this.w.newlineIndent(depth);
    else if (indent !== null) this.w.ascii(`\n${' '.repeat(indent * depth)}`);
  }

  private sortKey(i: number, position: number): SortKey {
    const tape = this.tape;
    const kind = tape[i]!;
    const start = tape[i + 1]!;
    const end = tape[i + 2]!;
    if ((kind & F_LONE) !== 0) {
      // JavaScript strings cannot tell a Python lone-surrogate pair from a real astral character.
      const cps = decodeCodePoints(this.b, start, end);
      return { position, text: '', ascii: false, codePoints: cps };
    }
    const text = decodeString(this.b, kind, start, end);
    return { position, text, ascii: (kind & (F_ESC | F_NONASCII)) === 0, codePoints: undefined };
  }

  private string(kind: number, start: number, end: number): void {
    const profile = this.profile;
    if (!profile.ascii && (kind & F_LONE) !== 0) {
      unrepresentable(profile, 'a string with a lone surrogate (it has no UTF-8 form)');
    }
    if ((kind & (profile.ascii ? F_ESC | F_NONASCII | F_DEL : F_ESC)) === 0) {
      // Nothing to escape or decode: the body's bytes, quotes included, are the canonical form.
      this.w.copy(this.b, start - 1, end + 1);
      return;
    }
    writePythonString(this.w, this.b, start, end, profile.ascii);
  }

  private integer(start: number, end: number): void {
    const b = this.b;
    const negative = b[start] === 0x2d;
    if (negative && end - start === 2 && b[start + 1] === 0x30) {
      this.w.byte(0x30); // Python's int('-0') is 0
      return;
    }
    if (this.profile.int64Only && end - start > 18) {
      const v = BigInt(b.toString('latin1', start, end));
      if (v < INT64_MIN || v > UINT64_MAX) unrepresentable(this.profile, 'an integer outside the 64-bit range');
    }
    this.w.copy(b, start, end);
  }

  /**
   * A 16–17-digit float already in Python's fixed layout: as written, or kept when it is the shortest
   * form (a run of one lexeme is decided once, {@link RepeatedFloat}).
   */
  private layoutFloat(start: number, end: number): void {
    const w = this.w;
    const b = this.b;
    if (this.repeated.writeRepeat(b, start, end, w)) return;
    const from = w.pos;
    if (this.floatMode === 'as-written' && !this.pass.spendExactCheck()) {
      this.pass.approximated = true;
      w.copy(b, start, end);
    } else if (this.pass.conversions.isShortest(b, start, end)) {
      // JavaScript prints the same shortest digits in the same fixed layout in this range, so one
      // conversion each way tells whether the lexeme is already repr's form.
      w.copy(b, start, end);
    } else {
      if (this.floatMode === 'as-written') this.pass.notShortest();
      this.float(start, end, 'exact');
      return;
    }
    this.repeated.remember(start, end, w, from);
  }

  /**
   * Writes a float in this pass's mode (or `floatMode`). A run of one lexeme is laid out once
   * ({@link RepeatedFloat}); in exact mode, a lexeme another form of this body converted is written as
   * that form's layout left it (the exact form is the same in every pass of one layout).
   */
  private float(start: number, end: number, floatMode: FloatMode = this.floatMode): void {
    const w = this.w;
    const b = this.b;
    if (this.repeated.writeRepeat(b, start, end, w)) return;
    const from = w.pos;
    const layout = this.profile.floatLayout;
    const conversions = this.pass.conversions;
    const formed = floatMode === 'exact' ? conversions.formed(layout, start) : undefined;
    if (formed !== undefined) {
      w.ascii(formed);
    } else {
      const overflow = writeFloatLexeme(b, start, end, layout, floatMode, w, this.pass);
      if (overflow !== 0) w.ascii(overflow > 0 ? this.profile.nonFinite.inf : this.profile.nonFinite.ninf);
      else if (conversions.shared && lastLexemeConverted() && w.pos - from <= REPEATED_ROOM && end - start <= REPEATED_ROOM) {
        conversions.remember(layout, b, start, latin1(w.buf, from, w.pos));
      }
    }
    this.repeated.remember(start, end, w, from);
  }
}
