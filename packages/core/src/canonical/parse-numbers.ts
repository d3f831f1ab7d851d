import type { ParseState } from './parse-state.js';
import * as Tape from './tape.js';

/**
 * Python 3.11+ refuses to convert integer strings longer than this (`sys.int_info.default_max_str_digits`),
 * so `json.loads` fails on them and no signer can have produced them.
 */
export const PYTHON_MAX_INT_DIGITS = 4300;

/**
 * For a float lexeme "I.F" (no exponent): {@link Tape.F_FLT_REPR} when it is already `repr`'s form of its
 * value (Python's fixed layout, at most 15 significant digits), {@link Tape.F_FLT_LAYOUT} when it has
 * that layout with 16–17 digits (`repr`'s form if it is the shortest, which whoever wrote it with a
 * shortest-digits printer made sure of), else 0. Decided here from the digits the scan just passed,
 * so the serializers copy such floats without reading them again.
 */
function plainFloatLayout(b: Uint8Array, intStart: number, intDigits: number, fracLen: number): number {
  const fracStart = intStart + intDigits + 1;
  const last = b[fracStart + fracLen - 1];
  if (last === 0x30 && fracLen !== 1) return 0; // a trailing zero repr would not write
  let n: number;
  if (b[intStart] !== 0x30) {
    if (intDigits > 16) return 0; // decpt > 16: exponent notation
    n = intDigits + fracLen;
  } else {
    let lead = 0;
    while (lead < fracLen && lead < 4 && b[fracStart + lead] === 0x30) lead++;
    if (lead === fracLen) return fracLen === 1 ? Tape.F_FLT_REPR : 0; // "0.0" (and "-0.0")
    if (lead === 4) return 0; // decpt <= -4: exponent notation
    n = fracLen - lead;
  }
  return n <= 15 ? Tape.F_FLT_REPR : n <= 17 ? Tape.F_FLT_LAYOUT : 0;
}

/**
 * Scans the number (or `-Infinity`) at `s.pos` onto the tape, as Python's scanner reads it; leaves
 * `s.pos` after it.
 * @internal
 */
export function scanNumber(s: ParseState): void {
  const b = s.b;
  const start = s.pos;
  let p = start;
  if (b[p] === 0x2d) {
    p++;
    if (b[p] === 0x49) {
      s.pos = p;
      s.literal('Infinity', Tape.T_NINF);
      return;
    }
  }
  const intStart = p;
  let c = b[p];
  if (c === 0x30) {
    p++;
  } else if (c !== undefined && c >= 0x31 && c <= 0x39) {
    p++;
    while ((c = b[p]) !== undefined && c >= 0x30 && c <= 0x39) p++;
  } else {
    s.pos = p;
    s.fail('Expecting value');
  }
  const intDigits = p - intStart;
  let isFloat = false;
  let exponent = false;
  // Python's scanner takes '.' and 'e' only when a digit follows; otherwise the number ends
  // before them and the stray character is a syntax error at the caller.
  let fracLen = 0;
  if (b[p] === 0x2e && (c = b[p + 1]) !== undefined && c >= 0x30 && c <= 0x39) {
    p += 2;
    while ((c = b[p]) !== undefined && c >= 0x30 && c <= 0x39) p++;
    isFloat = true;
    fracLen = p - intStart - intDigits - 1;
  }
  if (b[p] === 0x65 || b[p] === 0x45) {
    let q = p + 1;
    if (b[q] === 0x2b || b[q] === 0x2d) q++;
    if ((c = b[q]) !== undefined && c >= 0x30 && c <= 0x39) {
      q++;
      while ((c = b[q]) !== undefined && c >= 0x30 && c <= 0x39) q++;
      p = q;
      isFloat = true;
      exponent = true;
    }
  }
  if (!isFloat && intDigits > PYTHON_MAX_INT_DIGITS) {
    s.pos = start;
    s.fail(`integer with ${intDigits} digits exceeds the ${PYTHON_MAX_INT_DIGITS}-digit limit of Python's int()`);
  }
  s.pos = p;
  const length = p - start;
  if (isFloat) {
    s.features |= Tape.F_DOC_FLOAT;
    // A float is at most 24 characters in any profile ("-1.2345678901234567e-308"); without an
    // exponent, Python's layout adds at most ".0" or an exponent suffix to the lexeme's digits.
    s.bound += exponent ? Math.max(length, 25) : length + 6;
  } else {
    if (intDigits > 15) s.features |= Tape.F_DOC_BIGINT;
    else if (length === 2 && b[start] === 0x2d && b[intStart] === 0x30) s.features |= Tape.F_DOC_NEG_ZERO_INT;
    // The javascript profile rounds an integer of 16+ digits to a double: 9999999999999999 → 1e16, a digit more.
    s.bound += intDigits > 15 ? length + 1 : length;
  }
  s.push(isFloat ? (exponent ? Tape.T_FLT : Tape.T_FLT | plainFloatLayout(b, intStart, intDigits, fracLen)) : Tape.T_INT, start, p);
}
