import { sharedKeyCache } from './ascii-key-cache.js';
import { resolveBigIntegers } from './canonical-option-checks.js';
import { asBuffer, decodeString } from './strings.js';
import { RawJson } from './value-json.js';
import type { ParsedBody } from './tape.js';
import * as Tape from './tape.js';

/**
 * A JSON value as jobhook hands it to your code: integers beyond ±`Number.MAX_SAFE_INTEGER` are
 * `bigint` (never rounded) from {@link toValue} and verification, but strings of their digits in
 * events (see `bigIntegers`); every other number is a `number` (`NaN` and `±Infinity` included,
 * since Python's `json` writes them).
 */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | JsonObject;
/** A JSON object as jobhook hands it to your code. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/**
 * A JSON value that keeps every number exactly: floats (and `NaN`, `±Infinity`) are {@link RawJson}
 * holding their lexeme, so `1.0` stays `1.0` when the value is signed or written again.
 */
export type LosslessJsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | RawJson
  | LosslessJsonValue[]
  | { [key: string]: LosslessJsonValue };

/**
 * Builds the value of a parsed body as {@link toValue} does, but floats stay {@link RawJson}: for a
 * value received as JSON and signed or stored later (the reference sender's `user_webhook_parameters`).
 *
 * @example
 * ```ts
 * const params = toLosslessValue(parseBody(Buffer.from('{"x": 1.0}')));
 * stringifyJson(params) // '{"x":1.0}'
 * ```
 */
export function toLosslessValue(doc: ParsedBody): LosslessJsonValue {
  const buf = asBuffer(doc.bytes);
  return new ValueBuilder(buf, doc.tape, true).build(0) as LosslessJsonValue;
}

/**
 * How a value holds integers beyond ±(2^53−1), which a `number` would round: `'bigint'` (exact, but
 * `JSON.stringify` throws on it) or `'string'` (the integer's exact digits, e.g. `"-123456789012345678901"`,
 * which `JSON.stringify` writes as a string).
 */
export type BigIntegers = 'bigint' | 'string';

/** Options of {@link toValue}. */
export interface ToValueOptions {
  /** Integers beyond ±(2^53−1): `'bigint'` (default) or `'string'` of their exact digits. */
  bigIntegers?: BigIntegers;
}

/**
 * Builds the JavaScript value of a parsed body. Objects are plain objects; a `__proto__` key becomes
 * an own property (as `JSON.parse` makes it), never the prototype; the last of duplicate keys wins.
 * Integers beyond ±(2^53−1) are `bigint`, or strings of their digits with `{ bigIntegers: 'string' }`.
 *
 * @example
 * ```ts
 * toValue(parseBody(Buffer.from('{"n": 123456789012345678901234567890}')), { bigIntegers: 'string' })
 * // { n: '123456789012345678901234567890' }
 * ```
 */
export function toValue(doc: ParsedBody, options: ToValueOptions = {}): JsonValue {
  const bigAsString = resolveBigIntegers(options.bigIntegers, 'toValue', 'bigint') === 'string';
  const buf = asBuffer(doc.bytes);
  if ((doc.features & NATIVE_DIFFERS) === 0) {
    // JSON.parse builds the same value here (native, about twice as fast as building it from the
    // tape): every integer fits a double, no NaN/Infinity, no UTF-8-encoded surrogates (which a
    // UTF-8 decode would turn into U+FFFD), and it too makes `__proto__` an own property and keeps
    // the last of duplicate keys in the first one's place.
    const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
    return JSON.parse(buf.toString('utf8', bom)) as JsonValue;
  }
  return new ValueBuilder(buf, doc.tape, false, bigAsString).build(0);
}

/** Where JSON.parse reads the body differently from Python's json.loads. */
const NATIVE_DIFFERS = Tape.F_DOC_BIGINT | Tape.F_DOC_NONFINITE | Tape.F_DOC_NEG_ZERO_INT | Tape.F_RAWSURR;

class ValueBuilder {
  /** Index after the last built value. */
  next = 0;

  constructor(
    private readonly b: Buffer,
    private readonly tape: Int32Array,
    /** Floats as RawJson (see toLosslessValue). */
    private readonly rawFloats = false,
    /** Integers beyond ±(2^53−1) as strings of their digits instead of bigint (see ToValueOptions). */
    private readonly bigAsString = false,
  ) {}

  build(i: number): JsonValue {
    const tape = this.tape;
    const kind = tape[i]!;
    this.next = i + 3;
    switch (kind & Tape.TYPE_MASK) {
      case Tape.T_OBJ: {
        const count = tape[i + 1]!;
        const obj: JsonObject = {};
        let j = i + 3;
        for (let m = 0; m < count; m++) {
          const keyKind = tape[j]!;
          const key =
            (keyKind & (Tape.F_ESC | Tape.F_NONASCII)) === 0
              ? sharedKeyCache.get(this.b, tape[j + 1]!, tape[j + 2]!)
              : decodeString(this.b, keyKind, tape[j + 1]!, tape[j + 2]!);
          const value = this.build(j + 3);
          if (key === '__proto__') {
            Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
          } else {
            obj[key] = value;
          }
          j = this.next;
        }
        this.next = tape[i + 2]!;
        return obj;
      }
      case Tape.T_ARR: {
        const count = tape[i + 1]!;
        const arr: JsonValue[] = new Array<JsonValue>(count);
        let j = i + 3;
        for (let m = 0; m < count; m++) {
          arr[m] = this.build(j);
          j = this.next;
        }
        this.next = tape[i + 2]!;
        return arr;
      }
      case Tape.T_STR:
        return decodeString(this.b, kind, tape[i + 1]!, tape[i + 2]!);
      case Tape.T_INT: {
        const start = tape[i + 1]!;
        const end = tape[i + 2]!;
        const text = this.b.toString('latin1', start, end);
        if (end - start <= 15) return Number(text) + 0; // + 0 turns -0 into 0, as Python's int('-0')
        const big = BigInt(text);
        if (big >= Number.MIN_SAFE_INTEGER && big <= Number.MAX_SAFE_INTEGER) return Number(big);
        // A JSON integer's lexeme is already its exact decimal digits (no '+', no leading zeros).
        return this.bigAsString ? text : big;
      }
      case Tape.T_FLT: {
        const text = this.b.toString('latin1', tape[i + 1]!, tape[i + 2]!);
        return this.rawFloats ? (new RawJson(text) as unknown as JsonValue) : Number(text);
      }
      case Tape.T_TRUE:
        return true;
      case Tape.T_FALSE:
        return false;
      case Tape.T_NULL:
        return null;
      case Tape.T_NAN:
        return Number.NaN;
      case Tape.T_INF:
        return Number.POSITIVE_INFINITY;
      case Tape.T_NINF:
        return Number.NEGATIVE_INFINITY;
      default:
        throw new Error(`jobhook: corrupt tape kind ${kind} at ${i}`);
    }
  }
}
