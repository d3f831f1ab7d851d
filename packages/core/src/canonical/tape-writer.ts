import { JobhookError } from '../errors.js';
import type { ByteWriter } from './byte-writer.js';
import type { FloatMode, FloatPass } from './float-format.js';
import { decodeJavaScript, javascriptKeyOrder, plainKeyOrder, writeJavaScriptNumber } from './javascript-profile.js';
import { PythonFloats } from './python-floats.js';
import { forgetShapes, pythonKeyOrder } from './python-key-order.js';
import { ordersFor, type KeyOrderTable, type SharedKeyOrders } from './shared-key-orders.js';
import { writePythonString } from './string-writer.js';
import { asBuffer } from './strings.js';
import { unrepresentable, type TapeProfile } from './tape-profiles.js';
import type { ParsedBody } from './tape.js';
import * as Tape from './tape.js';

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * Writes a parsed body in `profile` to `writer`: the one walk of the tape that every profile shares
 * (values in document order, containers with the profile's separators and indentation, objects in
 * its key order). Where profiles differ, the walk branches on the profile, never through a callback,
 * so each loop stays one monomorphic function: key orders are computed by `python-key-order.ts` and
 * `javascript-profile.ts`, floats written by `python-floats.ts` and the javascript number writer.
 * `orders` (of this `doc`) share each object's key order with the other forms of the body; `pass`
 * holds the float state of this pass.
 * @throws JobhookError `ERR_CANONICAL_UNREPRESENTABLE` when the profile's reference would refuse the body.
 * @internal
 */
export function writeTape(
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
  let table: KeyOrderTable | undefined;
  let codePointTable: KeyOrderTable | undefined;
  if (profile.javascript) {
    if ((doc.features & Tape.F_DOC_NONFINITE) !== 0) {
      // Python accepts NaN and Infinity; JSON.parse does not, so this profile has no form for them.
      throw new JobhookError(
        'ERR_CANONICAL_UNREPRESENTABLE',
        'the javascript profile cannot read NaN or Infinity (JSON.parse refuses them)',
      );
    }
    table = ordersFor(orders, doc, 'javascript');
    // Python's key order is this profile's but for astral keys, array-index keys and surrogates.
    if ((doc.features & (Tape.F_LONE | Tape.F_RAWSURR)) === 0) codePointTable = ordersFor(orders, doc, 'codePoint');
  } else if (profile.sortKeys) {
    table = ordersFor(orders, doc, 'codePoint');
  }
  forgetShapes();
  new TapeWriter(asBuffer(doc.bytes), doc.tape, writer, profile, floatMode, table, codePointTable, pass).value(0, 0);
  forgetShapes();
}

/** Per depth, a reusable array of member key positions. Process-wide: serialization is synchronous and depth-first. */
const KEY_INDEX: Int32Array[] = [];

function keyIndexScratch(depth: number, count: number): Int32Array {
  let scratch = KEY_INDEX[depth];
  if (scratch === undefined || scratch.length < count) {
    scratch = new Int32Array(Math.max(16, count));
    KEY_INDEX[depth] = scratch;
  }
  return scratch;
}

class TapeWriter {
  private readonly javascript: boolean;
  /** String kinds to write through the escaper; any other string is its body bytes, quotes included. */
  private readonly rewrite: number;
  private readonly floats: PythonFloats;

  constructor(
    private readonly b: Buffer,
    private readonly tape: Int32Array,
    private readonly w: ByteWriter,
    private readonly profile: TapeProfile,
    floatMode: FloatMode,
    /** Key orders of this profile's rule, read and filled. */
    private readonly orders: KeyOrderTable | undefined,
    /** The javascript profile: code-point orders of earlier Python-family forms, read only. */
    private readonly codePointOrders: KeyOrderTable | undefined,
    private readonly pass: FloatPass,
  ) {
    this.javascript = profile.javascript;
    // JSON.stringify and ensure_ascii=False write valid UTF-8 without escapes back unchanged (a
    // raw surrogate is not valid UTF-8); ensure_ascii=True also escapes non-ASCII and DEL.
    this.rewrite = profile.ascii ? Tape.F_ESC | Tape.F_NONASCII | Tape.F_DEL : Tape.F_ESC | Tape.F_RAWSURR;
    this.floats = new PythonFloats(b, w, profile, floatMode, pass);
  }

  /** Writes the value at tape index `i`; returns the index after it. */
  value(i: number, depth: number): number {
    const tape = this.tape;
    const kind = tape[i]!;
    switch (kind & Tape.TYPE_MASK) {
      case Tape.T_OBJ:
        return this.object(i, depth);
      case Tape.T_ARR:
        return this.array(i, depth);
      case Tape.T_STR:
        this.string(kind, tape[i + 1]!, tape[i + 2]!);
        return i + 3;
      case Tape.T_INT:
        this.integer(tape[i + 1]!, tape[i + 2]!);
        return i + 3;
      case Tape.T_FLT:
        if (this.javascript) {
          writeJavaScriptNumber(this.w, this.b, tape[i + 1]!, tape[i + 2]!, this.pass.conversions);
        } else if ((kind & Tape.F_FLT_REPR) !== 0) {
          this.w.copy(this.b, tape[i + 1]!, tape[i + 2]!);
        } else if ((kind & Tape.F_FLT_LAYOUT) !== 0) {
          this.floats.layoutFloat(tape[i + 1]!, tape[i + 2]!);
        } else {
          this.floats.float(tape[i + 1]!, tape[i + 2]!);
        }
        return i + 3;
      case Tape.T_TRUE:
        this.w.ascii('true');
        return i + 3;
      case Tape.T_FALSE:
        this.w.ascii('false');
        return i + 3;
      case Tape.T_NULL:
        this.w.ascii('null');
        return i + 3;
      // Never in the javascript profile: writeTape refuses such bodies there.
      case Tape.T_NAN:
        this.w.ascii(this.profile.nonFinite.nan);
        return i + 3;
      case Tape.T_INF:
        this.w.ascii(this.profile.nonFinite.inf);
        return i + 3;
      case Tape.T_NINF:
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
    const orders = this.orders;
    let table = orders;
    let known = orders === undefined ? -1 : orders.find(i);
    if (known < 0 && this.codePointOrders !== undefined) {
      table = this.codePointOrders;
      known = plainKeyOrder(this.b, tape, table, i);
    }
    if (known >= 0) {
      // Ordered by an earlier form of this body: the entry holds the key indices in output order.
      const data = table!.data;
      const kept = data[known]!;
      if (kept === 0) {
        w.ascii('{}'); // the javascript profile: only `__proto__` keys
        return after;
      }
      w.byte(0x7b);
      for (let m = 0; m < kept; m++) this.member(data[known + 1 + m]!, m, depth);
      this.newline(depth);
      w.byte(0x7d);
      return after;
    }
    if (this.javascript) {
      const keys = javascriptKeyOrder(this.b, tape, i, count, this.codePointOrders);
      orders?.store(i, keys);
      if (keys.length === 0) {
        w.ascii('{}');
        return after;
      }
      w.byte(0x7b);
      for (let m = 0; m < keys.length; m++) this.member(keys[m]!, m, depth);
      this.newline(depth);
      w.byte(0x7d);
      return after;
    }
    const keyIndex = keyIndexScratch(depth, count);
    let keyKinds = 0;
    let j = i + 3;
    for (let m = 0; m < count; m++) {
      keyIndex[m] = j;
      keyKinds |= tape[j]!;
      j = Tape.indexAfter(tape, j + 3);
    }
    const asciiKeys = (keyKinds & (Tape.F_ESC | Tape.F_NONASCII)) === 0;
    const order = pythonKeyOrder(this.b, tape, keyIndex, count, depth, this.profile.sortKeys, asciiKeys);
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

  private newline(depth: number): void {
    const indent = this.profile.indent;
    if (indent === 2) this.w.newlineIndent(depth);
    else if (indent !== null) this.w.ascii(`\n${' '.repeat(indent * depth)}`);
  }

  private string(kind: number, start: number, end: number): void {
    if ((kind & this.rewrite) === 0) {
      // Nothing to escape or decode: the body's bytes, quotes included, are the canonical form.
      this.w.copy(this.b, start - 1, end + 1);
    } else if (this.javascript) {
      this.w.utf8(JSON.stringify(decodeJavaScript(this.b, kind, start, end)));
    } else {
      const ascii = this.profile.ascii;
      if (!ascii && (kind & Tape.F_LONE) !== 0) {
        unrepresentable(this.profile, 'a string with a lone surrogate (it has no UTF-8 form)');
      }
      writePythonString(this.w, this.b, start, end, ascii);
    }
  }

  /**
   * An integer lexeme. Python's `int('-0')` is 0 and JavaScript's `String(-0)` "0"; doubles hold
   * every integer of up to 15 digits, which `String(x)` writes back as it is.
   */
  private integer(start: number, end: number): void {
    const b = this.b;
    const negative = b[start] === 0x2d;
    if (negative && end - start === 2 && b[start + 1] === 0x30) {
      this.w.byte(0x30);
      return;
    }
    if (end - start > 15) {
      if (this.javascript && (negative ? end - start - 1 : end - start) > 15) {
        writeJavaScriptNumber(this.w, b, start, end, this.pass.conversions);
        return;
      }
      if (this.profile.int64Only && end - start > 18) {
        const v = BigInt(b.toString('latin1', start, end));
        if (v < INT64_MIN || v > UINT64_MAX) unrepresentable(this.profile, 'an integer outside the 64-bit range');
      }
    }
    this.w.copy(b, start, end);
  }
}
