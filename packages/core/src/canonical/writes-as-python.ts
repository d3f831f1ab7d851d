import { REPR_EXPONENT_AS_JS, REPR_FIXED_FRACTION, REPR_FIXED_INTEGRAL, pythonReprShape } from './float-digits.js';
import { FloatPass, type FloatConversions } from './float-format.js';
import { isPlainKey } from './javascript-profile.js';
import type { ParsedBody } from './tape.js';
import * as Tape from './tape.js';

/**
 * Whether the javascript profile writes `doc` to the same bytes as the python profile (floats
 * exact), so verification, having hashed the python form, need not write the javascript one.
 * Both indent by two with the same separators, write strings alike (`JSON.stringify` and
 * `json.dumps(ensure_ascii=False)` escape the same characters the same way) and integers of up to
 * 15 digits alike; they part on:
 * - keys: javascript puts array-index keys first, drops `__proto__`, sorts by UTF-16 units; so
 *   every key must be plain ASCII (no escape, not `__proto__`, not starting with a digit);
 * - numbers: integers of 16+ digits (javascript rounds them), NaN and Infinity (javascript has no
 *   form), and any float whose `String(x)` is not Python's `repr` (integral values, one-digit
 *   exponents, exponents from 1e16 to 1e21 and from 1e-5 to 1e-8, overflow);
 * - surrogates (raw or lone): the python profile has no form for them.
 *
 * Answers at the first difference; floats are loaded through `conversions` (shared with the forms
 * of this body), so the check converts no float the javascript form would not. Conservative:
 * `false` only means the form must be written.
 * @internal
 */
export function javascriptWritesAsPython(doc: ParsedBody, conversions: FloatConversions): boolean {
  if ((doc.features & (Tape.F_DOC_BIGINT | Tape.F_DOC_NONFINITE | Tape.F_LONE | Tape.F_RAWSURR)) !== 0) return false;
  const bytes = doc.bytes;
  const tape = doc.tape;
  const shapes = new ReprShapes(bytes, conversions);
  /** Index after the value at `i`, or -1 at the first difference. */
  const walk = (i: number): number => {
    const kind = tape[i]!;
    switch (kind & Tape.TYPE_MASK) {
      case Tape.T_OBJ: {
        const count = tape[i + 1]!;
        let j = i + 3;
        for (let m = 0; m < count; m++) {
          if (!isPlainKey(bytes, tape, j)) return -1;
          j = walk(j + 3);
          if (j < 0) return -1;
        }
        return j;
      }
      case Tape.T_ARR: {
        const count = tape[i + 1]!;
        let j = i + 3;
        for (let m = 0; m < count && j >= 0; m++) j = walk(j);
        return j;
      }
      case Tape.T_FLT: {
        const shape = shapes.of(tape[i + 1]!, tape[i + 2]!);
        return shape === REPR_FIXED_FRACTION || shape === REPR_EXPONENT_AS_JS ? i + 3 : -1;
      }
      default:
        return i + 3; // strings, integers of up to 15 digits, literals: written alike
    }
  };
  return walk(0) >= 0;
}

/**
 * Whether the orjson profile writes `doc` to the same bytes as the python profile (floats exact):
 * they differ only on numbers (orjson's Ryu writes exponents as `1e16`/`1e-5` and fixed notation
 * down to 1e-5, NaN and Infinity as `null`, and refuses integers beyond 64 bits) and on nesting
 * beyond 255 levels (orjson refuses it); so every float's `repr` must be fixed notation, where both
 * write the same digits the same way. Conservative, as {@link javascriptWritesAsPython}.
 * @internal
 */
export function orjsonWritesAsPython(doc: ParsedBody, conversions: FloatConversions): boolean {
  if ((doc.features & (Tape.F_DOC_BIGINT | Tape.F_DOC_NONFINITE)) !== 0 || doc.depth > 255) return false;
  const bytes = doc.bytes;
  const tape = doc.tape;
  const shapes = new ReprShapes(bytes, conversions);
  // Entries are three ints in document order, containers included: floats need no walk.
  for (let i = 0; i < doc.tapeLength; i += 3) {
    if ((tape[i]! & Tape.TYPE_MASK) !== Tape.T_FLT) continue;
    const shape = shapes.of(tape[i + 1]!, tape[i + 2]!);
    if (shape !== REPR_FIXED_FRACTION && shape !== REPR_FIXED_INTEGRAL) return false;
  }
  return true;
}

/** {@link pythonReprShape} of a body's lexemes, a run of one lexeme read once (its bytes compared instead). */
class ReprShapes {
  private readonly pass: FloatPass;
  private lastStart = -1;
  private lastLength = -1;
  private lastShape = 0;

  constructor(
    private readonly bytes: Uint8Array,
    conversions: FloatConversions,
  ) {
    this.pass = new FloatPass(conversions);
  }

  of(start: number, end: number): number {
    const b = this.bytes;
    const n = end - start;
    if (n === this.lastLength) {
      const last = this.lastStart;
      let k = 0;
      while (k < n && b[start + k] === b[last + k]) k++;
      if (k === n) return this.lastShape;
    }
    this.lastStart = start;
    this.lastLength = n;
    this.lastShape = pythonReprShape(b, start, end, this.pass);
    return this.lastShape;
  }
}
