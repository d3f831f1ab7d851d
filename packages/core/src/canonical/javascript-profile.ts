import { JobhookError } from '../errors.js';
import { ByteWriter } from './byte-writer.js';
import { FloatConversions } from './float-format.js';
import { ordersFor, type KeyOrderTable, type SharedKeyOrders } from './shared-key-orders.js';
import { bytesEqual, decodeString } from './strings.js';
import type { WorkBudget } from './work-budget.js';
import {
  F_DOC_NONFINITE,
  F_ESC,
  F_LONE,
  F_NONASCII,
  F_RAWSURR,
  T_ARR,
  T_FALSE,
  T_FLT,
  T_INT,
  T_NULL,
  T_OBJ,
  T_STR,
  T_TRUE,
  TYPE_MASK,
  type ParsedBody,
} from './tape.js';

/**
 * The recipe of the service's Node.js documentation, taken literally as the reference:
 * `JSON.stringify(sortKeysDeep(JSON.parse(body)), null, 2)` where `sortKeysDeep` rebuilds each object
 * from `Object.keys(o).sort()` by plain assignment. Its quirks are the profile: integer-like keys come
 * first in numeric order (JavaScript objects order them so), numbers are doubles (`1.0` prints `1`,
 * big integers round, an overflow prints `null`), a duplicate key keeps its first place and last
 * value, and a `__proto__` key is lost (the assignment sets the prototype instead).
 *
 * Written over the parse, value by value, so its cost and memory are those of the other profiles
 * rather than of a whole `JSON.parse` object graph and one `JSON.stringify` string.
 * @internal
 */
export function serializeJavaScript(doc: ParsedBody, orders?: SharedKeyOrders): Buffer {
  const writer = new ByteWriter(doc.bytes.length + (doc.bytes.length >> 1));
  writeJavaScript(doc, writer, orders, new FloatConversions());
  return writer.result();
}

/**
 * SHA-256 hex of {@link serializeJavaScript}'s bytes, hashed as they are written; `orders` (of this
 * `doc`) keep each object's key order for the next form, `budget` is charged every byte written,
 * `conversions` (of this `doc`) share its number conversions with the other forms.
 * @throws WorkBudgetExhausted when `budget` runs out.
 * @internal
 */
export function digestJavaScript(
  doc: ParsedBody,
  orders?: SharedKeyOrders,
  budget?: WorkBudget,
  conversions: FloatConversions = new FloatConversions(),
): string {
  const writer = new ByteWriter(0, WINDOW, budget);
  writeJavaScript(doc, writer, orders, conversions);
  return writer.digestHex();
}

const WINDOW = Buffer.allocUnsafe(64 * 1024);

function writeJavaScript(doc: ParsedBody, writer: ByteWriter, orders: SharedKeyOrders | undefined, conversions: FloatConversions): void {
  if ((doc.features & F_DOC_NONFINITE) !== 0) {
    // Python accepts NaN and Infinity; JSON.parse does not, so this profile has no form for them.
    throw new JobhookError('ERR_CANONICAL_UNREPRESENTABLE', 'the javascript profile cannot read NaN or Infinity (JSON.parse refuses them)');
  }
  const bytes = doc.bytes;
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Python's key order is this profile's but for astral keys, array-index keys and surrogates.
  const codePointOrders = (doc.features & (F_LONE | F_RAWSURR)) === 0 ? ordersFor(orders, doc, 'codePoint') : undefined;
  new JavaScriptWriter(buf, doc.tape, writer, ordersFor(orders, doc, 'javascript'), codePointOrders, conversions).value(0, 0);
}

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

class JavaScriptWriter {
  constructor(
    private readonly b: Buffer,
    private readonly tape: Int32Array,
    private readonly w: ByteWriter,
    private readonly orders: KeyOrderTable | undefined,
    private readonly codePointOrders: KeyOrderTable | undefined,
    private readonly conversions: FloatConversions,
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
        this.number(tape[i + 1]!, tape[i + 2]!);
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
      default:
        throw new Error(`jobhook: unexpected tape kind ${kind} at ${i} in the javascript profile`);
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
      if (m > 0) w.byte(0x2c);
      w.newlineIndent(depth + 1);
      j = this.value(j, depth + 1);
    }
    w.newlineIndent(depth);
    w.byte(0x5d);
    return tape[i + 2]!;
  }

  private object(i: number, depth: number): number {
    const tape = this.tape;
    const count = tape[i + 1]!;
    const after = tape[i + 2]!;
    const w = this.w;
    const orders = this.orders;
    const known = orders === undefined ? -1 : orders.find(i);
    if (known >= 0) {
      // Ordered by an earlier form of this body: each entry is the key of a member's last value.
      const data = orders!.data;
      const kept = data[known]!;
      if (kept === 0) {
        w.ascii('{}');
        return after;
      }
      w.byte(0x7b);
      for (let m = 0; m < kept; m++) {
        const k = data[known + 1 + m]!;
        if (m > 0) w.byte(0x2c);
        w.newlineIndent(depth + 1);
        w.utf8(JSON.stringify(this.decode(tape[k]!, tape[k + 1]!, tape[k + 2]!)));
        w.ascii(': ');
        this.value(k + 3, depth + 1);
      }
      w.newlineIndent(depth);
      w.byte(0x7d);
      return after;
    }
    if (this.writePlainKeys(i, depth)) return after;
    const sorted = this.membersInCodePointOrder(i);
    let members: Iterable<Member>;
    if (sorted !== undefined) {
      members = sorted;
    } else {
      // JSON.parse: one property per key, in first-seen place, holding the last value.
      const byKey = new Map<string, Member>();
      let j = i + 3;
      for (let m = 0; m < count; m++) {
        const key = this.decode(tape[j]!, tape[j + 1]!, tape[j + 2]!);
        const v = j + 3;
        const member = byKey.get(key);
        if (member === undefined) byKey.set(key, { key, valueAt: v });
        else member.valueAt = v;
        const kind = tape[v]! & TYPE_MASK;
        j = kind === T_OBJ || kind === T_ARR ? tape[v + 2]! : v + 3;
      }
      members = byKey.values();
    }
    // The rebuilt object: array-index keys in numeric order, then the others in the order
    // Object.keys(o).sort() assigned them (UTF-16 code units); `__proto__` is not an own key.
    const indexed: { index: number; member: Member }[] = [];
    const named: Member[] = [];
    for (const member of members) {
      if (member.key === '__proto__') continue;
      const index = arrayIndex(member.key);
      if (index >= 0) indexed.push({ index, member });
      else named.push(member);
    }
    if (indexed.length + named.length === 0) {
      orders?.store(i, []);
      w.ascii('{}');
      return after;
    }
    indexed.sort((a, b) => a.index - b.index);
    // UTF-16 order (`<`). From code-point order only astral keys against U+E000-U+FFFF move, so the
    // engine's merge sort meets long sorted runs and compares about once per key.
    named.sort(byUtf16);
    if (orders !== undefined) {
      const keys = [...indexed.map(({ member }) => member.valueAt - 3), ...named.map((member) => member.valueAt - 3)];
      orders.store(i, keys);
    }
    w.byte(0x7b);
    let first = true;
    const writeMember = (member: Member): void => {
      if (!first) w.byte(0x2c);
      first = false;
      w.newlineIndent(depth + 1);
      w.utf8(JSON.stringify(member.key));
      w.ascii(': ');
      this.value(member.valueAt, depth + 1);
    };
    for (const { member } of indexed) writeMember(member);
    for (const member of named) writeMember(member);
    w.newlineIndent(depth);
    w.byte(0x7d);
    return after;
  }

  /**
   * Writes the object at `i` in the code-point order an earlier Python-family form sorted it in,
   * when every key is plain ASCII (no escape, not `__proto__`, not starting with a digit, so no
   * array index): there UTF-16 order is code-point order and `JSON.stringify` writes each key as its
   * body bytes, so no key is decoded. Answers false, writing nothing, otherwise.
   */
  private writePlainKeys(i: number, depth: number): boolean {
    const table = this.codePointOrders;
    const at = table === undefined ? -1 : table.find(i);
    if (at < 0) return false;
    const tape = this.tape;
    const b = this.b;
    const data = table!.data;
    const kept = data[at]!;
    if (kept === 0) return false;
    for (let m = 0; m < kept; m++) {
      const k = data[at + 1 + m]!;
      if ((tape[k]! & (F_ESC | F_NONASCII)) !== 0) return false;
      const start = tape[k + 1]!;
      const c = b[start];
      if (c !== undefined && c >= 0x30 && c <= 0x39) return false;
      if (bytesEqual(b, start, tape[k + 2]!, '__proto__')) return false;
    }
    const w = this.w;
    w.byte(0x7b);
    for (let m = 0; m < kept; m++) {
      const k = data[at + 1 + m]!;
      if (m > 0) w.byte(0x2c);
      w.newlineIndent(depth + 1);
      w.copy(b, tape[k + 1]! - 1, tape[k + 2]! + 1);
      w.byte(0x3a);
      w.byte(0x20);
      this.value(k + 3, depth + 1);
    }
    w.newlineIndent(depth);
    w.byte(0x7d);
    return true;
  }

  /**
   * The object's members, one per key with its last value, in code-point order, when an earlier
   * Python-family form of this body sorted it (its keys decode here as there: no lone or raw
   * surrogates in the body); otherwise undefined.
   */
  private membersInCodePointOrder(i: number): Member[] | undefined {
    const table = this.codePointOrders;
    const at = table === undefined ? -1 : table.find(i);
    if (at < 0) return undefined;
    const tape = this.tape;
    const data = table!.data;
    const kept = data[at]!;
    const out = new Array<Member>(kept);
    for (let m = 0; m < kept; m++) {
      const k = data[at + 1 + m]!;
      out[m] = { key: this.decode(tape[k]!, tape[k + 1]!, tape[k + 2]!), valueAt: k + 3 };
    }
    return out;
  }

  /** The string as JSON.parse reads it from the UTF-8 text of the body. */
  private decode(kind: number, start: number, end: number): string {
    if ((kind & F_RAWSURR) !== 0) {
      // Decoding the body as UTF-8 turns each byte of an encoded surrogate into U+FFFD.
      return JSON.parse(this.b.toString('utf8', start - 1, end + 1)) as string;
    }
    return decodeString(this.b, kind, start, end);
  }

  private string(kind: number, start: number, end: number): void {
    if ((kind & (F_ESC | F_RAWSURR)) === 0) {
      // No escapes and valid UTF-8: JSON.stringify writes these bytes back unchanged.
      this.w.copy(this.b, start - 1, end + 1);
      return;
    }
    this.w.utf8(JSON.stringify(this.decode(kind, start, end)));
  }

  /** An integer lexeme: doubles hold every integer of up to 15 digits, which String(x) writes back as they are but -0 ("0"). */
  private integer(start: number, end: number): void {
    const negative = this.b[start] === 0x2d;
    const digits = negative ? end - start - 1 : end - start;
    if (digits > 15) this.number(start, end);
    else if (negative && digits === 1 && this.b[end - 1] === 0x30) this.w.byte(0x30);
    else this.w.copy(this.b, start, end);
  }

  private number(start: number, end: number): void {
    const shortest = this.conversions.shortest(this.b, start, end);
    // JSON.stringify: finite numbers as String(x) (-0 as "0"), overflow to ±Infinity as null.
    this.w.ascii(shortest === 'Infinity' || shortest === '-Infinity' ? 'null' : shortest);
  }
}
