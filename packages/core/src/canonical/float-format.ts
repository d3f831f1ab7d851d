/**
 * Float formatting of the canonical profiles. Both Python's `repr(float)` and orjson (Ryu) print the
 * shortest digit string that reads back as the same double, choosing the closest when several are
 * equally short; they differ only in where they switch to exponent notation and how they write the
 * exponent. So each float is reduced once to `(digits, decpt)`, value = 0.DIGITS × 10^decpt, and the
 * profiles only lay those out.
 */

/** A finite double as its shortest round-trip decimal digits. @internal */
export interface ShortDecimal {
  /** Sign bit (true for -0.0 too). */
  negative: boolean;
  /** Significant digits, no leading or trailing zeros; `"0"` for zero. */
  digits: string;
  /** Position of the decimal point: value = 0.DIGITS × 10^decpt. Zero has decpt 1. */
  decpt: number;
}

/**
 * Any decimal of at most 15 significant digits in the normal range is recovered exactly from the
 * double nearest to it (DBL_DIG = 15), so no other string of that length or shorter reads back as
 * the same double: its own digits are the shortest round-trip form. Keeping well inside the normal
 * range (subnormals carry fewer digits) makes that hold without converting.
 */
const FAST_MAX_DIGITS = 15;
const FAST_MAX_DECPT = 290;

/** The shortest round-trip digits of a finite double, from ECMAScript's Number::toString (which picks the closest of equally short candidates). @internal */
export function shortestDecimal(x: number): ShortDecimal {
  const negative = x < 0 || Object.is(x, -0);
  if (x === 0) return { negative, digits: '0', decpt: 1 };
  return splitDecimal(String(negative ? -x : x), negative);
}

/**
 * Reduces a JSON number lexeme read as a Python float (it has a fraction or an exponent) to its
 * shortest round-trip digits, or to `null` when it overflows to infinity (sign in `overflowNegative`).
 * @internal
 */
export function lexemeDecimal(lexeme: string): ShortDecimal | number {
  const negative = lexeme.charCodeAt(0) === 0x2d;
  let ePos = lexeme.indexOf('e');
  if (ePos < 0) ePos = lexeme.indexOf('E');
  const mantissaEnd = ePos < 0 ? lexeme.length : ePos;
  const exponent = ePos < 0 ? 0 : Number(lexeme.slice(ePos + 1));
  const dot = lexeme.indexOf('.');
  const intStart = negative ? 1 : 0;
  const intEnd = dot < 0 || dot > mantissaEnd ? mantissaEnd : dot;
  let digits = lexeme.slice(intStart, intEnd) + (intEnd < mantissaEnd ? lexeme.slice(intEnd + 1, mantissaEnd) : '');
  let decpt = intEnd - intStart + exponent;
  let lead = 0;
  while (lead < digits.length && digits.charCodeAt(lead) === 0x30) lead++;
  if (lead === digits.length) return { negative, digits: '0', decpt: 1 };
  let trail = digits.length;
  while (digits.charCodeAt(trail - 1) === 0x30) trail--;
  digits = digits.slice(lead, trail);
  decpt -= lead;
  if (digits.length <= FAST_MAX_DIGITS && decpt > -FAST_MAX_DECPT && decpt < FAST_MAX_DECPT) {
    return { negative, digits, decpt };
  }
  const x = Number(lexeme);
  // Overflow is reported as the infinity itself; underflow yields a signed zero.
  if (!Number.isFinite(x)) return x;
  return shortestDecimal(x);
}

function splitDecimal(text: string, negative: boolean): ShortDecimal {
  const ePos = text.indexOf('e');
  const mantissa = ePos < 0 ? text : text.slice(0, ePos);
  const exponent = ePos < 0 ? 0 : Number(text.slice(ePos + 1));
  const dot = mantissa.indexOf('.');
  const intPart = dot < 0 ? mantissa : mantissa.slice(0, dot);
  let digits = dot < 0 ? intPart : intPart + mantissa.slice(dot + 1);
  let decpt = intPart.length + exponent;
  let lead = 0;
  while (digits.charCodeAt(lead) === 0x30) lead++;
  let trail = digits.length;
  while (digits.charCodeAt(trail - 1) === 0x30) trail--;
  digits = digits.slice(lead, trail);
  decpt -= lead;
  return { negative, digits, decpt };
}

/**
 * Python's `float.__repr__`: fixed notation when -4 < decpt <= 16 (with `.0` on integral values),
 * otherwise `d.ddde±XX` with at least two exponent digits. @internal
 */
export function formatPythonFloat(d: ShortDecimal): string {
  const { digits, decpt } = d;
  const sign = d.negative ? '-' : '';
  const n = digits.length;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
    if (decpt >= n) return `${sign}${digits}${'0'.repeat(decpt - n)}.0`;
    return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  const exp = decpt - 1;
  const mantissa = n === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  const absExp = exp < 0 ? -exp : exp;
  return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${absExp < 10 ? '0' : ''}${absExp}`;
}

/**
 * orjson's float format (the Ryu crate's `format64`): fixed notation when -5 < decpt <= 16, otherwise
 * `d.ddde[-]X` with no plus sign and no padding. @internal
 */
export function formatRyuFloat(d: ShortDecimal): string {
  const { digits, decpt } = d;
  const sign = d.negative ? '-' : '';
  const n = digits.length;
  const k = decpt - n;
  if (k >= 0 && decpt <= 16) return `${sign}${digits}${'0'.repeat(k)}.0`;
  if (decpt > 0 && decpt <= 16) return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  if (decpt > -5 && decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  const mantissa = n === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return `${sign}${mantissa}e${decpt - 1}`;
}
