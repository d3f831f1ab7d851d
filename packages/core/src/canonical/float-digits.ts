import { ByteWriter } from './byte-writer.js';
import type { FloatLayout, FloatMode, FloatPass } from './float-format.js';
import { bytesEqual } from './strings.js';

/**
 * Float formatting of the canonical profiles. Python's `repr(float)` and orjson (Ryu) both print the
 * shortest digit string that reads back as the same double, the closest one when several are equally
 * short; they differ only in where they switch to exponent notation and how they write the exponent.
 * So a float is reduced once to significant digits plus a decimal-point position
 * (value = 0.DIGITS × 10^decpt), held in a scratch buffer, and each profile only lays those out.
 * This runs once per float of every body, so it works on bytes and allocates nothing.
 */

// Process-wide scratch on purpose: formatting is synchronous and never re-entered, so one buffer serves every float without allocating.
/** Significant digits of the float being formatted (ASCII), no leading or trailing zeros. */
const digits = new Uint8Array(32);
let digitCount = 0;
let decpt = 0;
let negative = false;
/** Whether the last lexeme loaded went through the engine's conversion (then its layout is the exact form). */
let converted = false;

/**
 * Any decimal of at most 15 significant digits in the normal range is recovered exactly from the
 * double nearest to it (DBL_DIG = 15), so no other string of that length or shorter reads back as
 * the same double: its own digits are the shortest round-trip form, no conversion needed.
 * Subnormals carry fewer digits, hence the margin on the exponent.
 */
const FAST_MAX_DIGITS = 15;
const FAST_MAX_DECPT = 290;

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** {@link loadLexeme}'s answer when the lexeme is already written as both layouts write it. */
const AS_IS = 1;

/**
 * Loads a JSON float lexeme `b[start, end)` (it has a fraction or an exponent) into the scratch
 * state. Returns 0 when loaded, {@link AS_IS} when the lexeme is already in canonical form (the
 * common case, where Python wrote the body, is flagged by the parse and never reaches here), or ±Infinity when the value overflows.
 */
function loadLexeme(b: Uint8Array, start: number, end: number, mode: FloatMode, pass: FloatPass): number {
  converted = false;
  let p = start;
  negative = b[p] === 0x2d;
  if (negative) p++;
  const intStart = p;
  while (p < end && isDigit(b[p])) p++;
  const intLen = p - intStart;
  let fracStart = p;
  let fracLen = 0;
  if (b[p] === 0x2e) {
    fracStart = ++p;
    while (p < end && isDigit(b[p])) p++;
    fracLen = p - fracStart;
  }
  let exp = 0;
  let expHuge = false;
  if (p < end) {
    p++; // e or E
    const expNegative = b[p] === 0x2d;
    if (expNegative || b[p] === 0x2b) p++;
    for (; p < end; p++) {
      exp = exp * 10 + (b[p]! - 0x30);
      if (exp > 1e6) expHuge = true;
    }
    if (expNegative) exp = -exp;
  }
  const total = intLen + fracLen;
  const plain = p === fracStart + fracLen && fracLen > 0; // "I.F", no exponent
  let lead = 0;
  while (lead < total && digitAt(b, intStart, intLen, fracStart, lead) === 0x30) lead++;
  if (lead === total) {
    if (plain && intLen === 1 && fracLen === 1) return AS_IS; // 0.0 or -0.0
    setZero();
    return 0;
  }
  let trail = total;
  while (digitAt(b, intStart, intLen, fracStart, trail - 1) === 0x30) trail--;
  const n = trail - lead;
  const point = intLen + exp - lead;
  // As written, a lexeme of 16-17 digits is laid out unconverted unless it is one of the pass's checks.
  const checked = mode !== 'exact' && n > FAST_MAX_DIGITS && n <= MAX_SHORTEST_DIGITS && pass.spendExactCheck();
  const maxDigits = mode === 'exact' || checked ? FAST_MAX_DIGITS : MAX_SHORTEST_DIGITS;
  if (!expHuge && n <= maxDigits && point > -FAST_MAX_DECPT && point < FAST_MAX_DECPT) {
    if (n > FAST_MAX_DIGITS) pass.approximated = true;
    // "I.F" is canonical in fixed range when F has no trailing zero beyond a lone "0" ("1.0").
    if (plain && point > -4 && point <= 16 && (b[end - 1] !== 0x30 || fracLen === 1)) return AS_IS;
    for (let k = 0; k < n; k++) digits[k] = digitAt(b, intStart, intLen, fracStart, lead + k);
    digitCount = n;
    decpt = point;
    return 0;
  }
  converted = true;
  const shortest = pass.conversions.shortest(b, start, end);
  if (shortest === 'Infinity') return Number.POSITIVE_INFINITY;
  if (shortest === '-Infinity') return Number.NEGATIVE_INFINITY;
  // JavaScript and Python agree on the digits and, for non-integral values from 1e-4 to 1e16,
  // on the notation: then an unchanged lexeme is already the canonical form.
  if (plain && point > -4 && point <= 16 && bytesEqual(b, start, end, shortest)) return AS_IS;
  // The sign is the lexeme's: String(-0) is "0", and a negative lexeme that underflows reads as -0.
  loadShortest(negative, shortest);
  if (checked && !sameDigits(b, intStart, intLen, fracStart, lead, n)) pass.notShortest();
  return 0;
}

/** Longest shortest-round-trip form of a double, in significant digits. */
const MAX_SHORTEST_DIGITS = 17;

function digitAt(b: Uint8Array, intStart: number, intLen: number, fracStart: number, k: number): number {
  return k < intLen ? b[intStart + k]! : b[fracStart + k - intLen]!;
}

/** Whether the loaded digits are the lexeme's `n` significant digits from `lead` on. */
function sameDigits(b: Uint8Array, intStart: number, intLen: number, fracStart: number, lead: number, n: number): boolean {
  if (digitCount !== n) return false;
  for (let k = 0; k < n; k++) if (digits[k] !== digitAt(b, intStart, intLen, fracStart, lead + k)) return false;
  return true;
}

function setZero(): void {
  digits[0] = 0x30;
  digitCount = 1;
  decpt = 1;
}

/** Loads a finite double's shortest round-trip digits (ECMAScript's Number::toString picks the closest of equally short candidates, as Python does). */
function loadDouble(x: number): void {
  loadShortest(x < 0 || Object.is(x, -0), String(x));
}

/** Loads a finite double from `shortest` = `String(x)` (which writes -0 as "0") and its sign. */
function loadShortest(isNegative: boolean, shortest: string): void {
  negative = isNegative;
  if (shortest === '0') {
    setZero();
    return;
  }
  const text = shortest.charCodeAt(0) === 0x2d ? shortest.slice(1) : shortest;
  let exp = 0;
  let n = 0;
  let intLen = -1;
  let leadingZeros = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      intLen = i;
    } else if (c === 0x65) {
      // "e+308", "e-7": read in place (Number of a slice costs more than the rest of the float).
      let k = i + 1;
      const expNegative = text.charCodeAt(k) === 0x2d;
      if (expNegative || text.charCodeAt(k) === 0x2b) k++;
      for (; k < text.length; k++) exp = exp * 10 + text.charCodeAt(k) - 0x30;
      if (expNegative) exp = -exp;
      if (intLen < 0) intLen = i;
      break;
    } else if (n === 0 && c === 0x30) {
      leadingZeros++;
    } else {
      digits[n++] = c;
    }
  }
  if (intLen < 0) intLen = text.length;
  while (digits[n - 1] === 0x30) n--;
  digitCount = n;
  decpt = intLen + exp - leadingZeros;
}

function writeDigits(w: ByteWriter, from: number, to: number): void {
  for (let k = from; k < to; k++) w.byte(digits[k]!);
}

function writeZeros(w: ByteWriter, count: number): void {
  for (let k = 0; k < count; k++) w.byte(0x30);
}

/**
 * Python's `float.__repr__`: fixed notation when -4 < decpt <= 16 (with `.0` on integral values),
 * otherwise `d.ddde±XX` with at least two exponent digits. @internal
 */
export const pythonLayout: FloatLayout = (w) => {
  const n = digitCount;
  if (negative) w.byte(0x2d);
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      w.byte(0x30);
      w.byte(0x2e);
      writeZeros(w, -decpt);
      writeDigits(w, 0, n);
    } else if (decpt >= n) {
      writeDigits(w, 0, n);
      writeZeros(w, decpt - n);
      w.byte(0x2e);
      w.byte(0x30);
    } else {
      writeDigits(w, 0, decpt);
      w.byte(0x2e);
      writeDigits(w, decpt, n);
    }
    return;
  }
  writeMantissa(w, n);
  const exp = decpt - 1;
  w.byte(0x65);
  w.byte(exp < 0 ? 0x2d : 0x2b);
  const abs = exp < 0 ? -exp : exp;
  if (abs < 10) w.byte(0x30);
  writeInteger(w, abs);
};

/**
 * orjson's float format (the Ryu crate's `format64`): fixed notation when -5 < decpt <= 16,
 * otherwise `d.ddde[-]X` with no plus sign and no padding. @internal
 */
export const ryuLayout: FloatLayout = (w) => {
  const n = digitCount;
  if (negative) w.byte(0x2d);
  if (decpt - n >= 0 && decpt <= 16) {
    writeDigits(w, 0, n);
    writeZeros(w, decpt - n);
    w.byte(0x2e);
    w.byte(0x30);
  } else if (decpt > 0 && decpt <= 16) {
    writeDigits(w, 0, decpt);
    w.byte(0x2e);
    writeDigits(w, decpt, n);
  } else if (decpt > -5 && decpt <= 0) {
    w.byte(0x30);
    w.byte(0x2e);
    writeZeros(w, -decpt);
    writeDigits(w, 0, n);
  } else {
    writeMantissa(w, n);
    w.byte(0x65);
    const exp = decpt - 1;
    if (exp < 0) w.byte(0x2d);
    writeInteger(w, exp < 0 ? -exp : exp);
  }
};

/** Writes a non-negative integer below 10,000 (an exponent) in decimal, without making a string. */
function writeInteger(w: ByteWriter, x: number): void {
  if (x >= 1000) w.byte(0x30 + Math.floor(x / 1000));
  if (x >= 100) w.byte(0x30 + (Math.floor(x / 100) % 10));
  if (x >= 10) w.byte(0x30 + (Math.floor(x / 10) % 10));
  w.byte(0x30 + (x % 10));
}

function writeMantissa(w: ByteWriter, n: number): void {
  w.byte(digits[0]!);
  if (n > 1) {
    w.byte(0x2e);
    writeDigits(w, 1, n);
  }
}

/**
 * Writes the float lexeme `b[start, end)` in `layout`, as part of `pass`. Returns 0, or the infinity the value
 * overflows to (then nothing was written: each profile spells infinities its own way).
 * @internal
 */
export function writeFloatLexeme(
  b: Uint8Array,
  start: number,
  end: number,
  layout: FloatLayout,
  mode: FloatMode,
  w: ByteWriter,
  pass: FloatPass,
): number {
  const loaded = loadLexeme(b, start, end, mode, pass);
  if (loaded === AS_IS) {
    w.copy(b, start, end);
    return 0;
  }
  if (loaded !== 0) return loaded;
  layout(w);
  return 0;
}

/** {@link pythonReprShape}: `repr` is fixed notation with a fraction digit other than 0 (`0.5`, `12.25`). @internal */
export const REPR_FIXED_FRACTION = 1;
/** {@link pythonReprShape}: `repr` is fixed notation of an integral value (`1.0`, `-0.0`, `1000.0`). @internal */
export const REPR_FIXED_INTEGRAL = 2;
/** {@link pythonReprShape}: `repr` is exponent notation that `String(x)` writes alike (exponent of 2+ digits, beyond JavaScript's fixed range). @internal */
export const REPR_EXPONENT_AS_JS = 3;
/** {@link pythonReprShape}: any other exponent notation, or an overflow. @internal */
export const REPR_OTHER = 4;

/**
 * How Python's `repr` writes the value of the float lexeme `b[start, end)`, for the checks that two
 * profiles write a body alike: fixed notation (`-4 < decpt <= 16`) with or without a fraction, or
 * exponent notation. Loads the lexeme exactly (a conversion through `pass.conversions` only where
 * the lexeme's own digits do not settle it).
 * @internal
 */
export function pythonReprShape(b: Uint8Array, start: number, end: number, pass: FloatPass): number {
  const loaded = loadLexeme(b, start, end, 'exact', pass);
  // As is: "I.F" in repr's fixed layout, where F is "0" only for an integral value.
  if (loaded === AS_IS) return b[end - 1] === 0x30 ? REPR_FIXED_INTEGRAL : REPR_FIXED_FRACTION;
  if (loaded !== 0) return REPR_OTHER;
  if (decpt > -4 && decpt <= 16) return decpt >= digitCount ? REPR_FIXED_INTEGRAL : REPR_FIXED_FRACTION;
  // JavaScript writes fixed notation up to decpt 21 and down to decpt -5, and one-digit exponents unpadded.
  return decpt > 21 || decpt <= -9 ? REPR_EXPONENT_AS_JS : REPR_OTHER;
}

/**
 * Whether the lexeme of the last {@link writeFloatLexeme} went through the engine's conversion: then
 * what it wrote is the exact form, whatever the mode, for {@link FloatConversions.remember}.
 * @internal
 */
export function lastLexemeConverted(): boolean {
  return converted;
}

/** Python's `repr(x)` of a finite double, e.g. `1e-07`, `1.0`, `-0.0`. @internal */
export function pythonFloatRepr(x: number): string {
  loadDouble(x);
  const w = new ByteWriter(32);
  pythonLayout(w);
  return w.result().toString('latin1');
}
