/**
 * The parsed form of a body: a flat "tape" of 3-int entries `[kind, a, b]` over the original bytes,
 * in document order. Nothing is decoded while parsing; the serializers copy byte ranges and decode
 * only what they must (keys to sort them, escaped strings to re-escape them).
 *
 * - containers: `[T_OBJ | T_ARR, count, indexAfterContainer]`, followed by their children
 *   (an object's children alternate key string, value);
 * - strings: `[T_STR | flags, start, end]`, the byte range between the quotes;
 * - numbers: `[T_INT | T_FLT, start, end]`, the lexeme's byte range;
 * - literals: `[T_TRUE | ..., 0, 0]`.
 *
 * @internal
 */
export const T_OBJ = 0;
/** @internal */ export const T_ARR = 1;
/** @internal */ export const T_STR = 2;
/** @internal */ export const T_INT = 3;
/** @internal */ export const T_FLT = 4;
/** @internal */ export const T_TRUE = 5;
/** @internal */ export const T_FALSE = 6;
/** @internal */ export const T_NULL = 7;
/** @internal */ export const T_NAN = 8;
/** @internal */ export const T_INF = 9;
/** @internal */ export const T_NINF = 10;

/** Low bits of `kind` hold the type. @internal */
export const TYPE_MASK = 15;
/** The string has at least one backslash escape. @internal */
export const F_ESC = 16;
/** The string has at least one byte >= 0x80. @internal */
export const F_NONASCII = 32;
/** The string holds a code point Python keeps as a lone surrogate (so it has no UTF-8 form). @internal */
export const F_LONE = 64;
/** The string has a UTF-8-encoded surrogate (accepted by Python's `surrogatepass`). @internal */
export const F_RAWSURR = 128;
/** The ASCII string has a DEL (0x7f), which `ensure_ascii=True` escapes. @internal */
export const F_DEL = 256;

/** On a float: the lexeme is already Python's `repr` of its value (copy it). @internal */
export const F_FLT_REPR = 16;
/** On a float: the lexeme has `repr`'s layout with 16–17 digits (copy it when writing numbers as written). @internal */
export const F_FLT_LAYOUT = 32;

/** The body has a float (fraction or exponent). Document feature, in {@link ParsedBody.features}. @internal */
export const F_DOC_FLOAT = 1 << 12;
/** The body has `NaN`, `Infinity` or `-Infinity`. @internal */
export const F_DOC_NONFINITE = 1 << 13;
/** The body has an integer of more than 15 digits (a double cannot hold every such integer). @internal */
export const F_DOC_BIGINT = 1 << 14;

/** The body has the integer `-0` (Python reads 0, JSON.parse -0). @internal */
export const F_DOC_NEG_ZERO_INT = 1 << 15;

/** Bytes of the parsed body plus its tape. Root value at tape index 0. */
export interface ParsedBody {
  /** The body bytes the tape points into (a leading UTF-8 BOM is not part of any entry). */
  readonly bytes: Uint8Array;
  /** The tape; see the module comment. */
  readonly tape: Int32Array;
  /** Number of used ints in `tape`. */
  readonly tapeLength: number;
  /** Deepest container nesting seen (top-level object = 1). */
  readonly depth: number;
  /**
   * What the body holds, so verification skips profiles that cannot differ from one already tried:
   * the OR of every string's flags (`F_ESC`, `F_NONASCII`, ...) and the `F_DOC_*` bits.
   */
  readonly features: number;
  /** Upper bound of the canonical size in bytes, in any profile. */
  readonly canonicalBound: number;
}

/** Tape index after the value at `i`: a container's entry holds it, any other value is one entry. @internal */
export function indexAfter(tape: Int32Array, i: number): number {
  const type = tape[i]! & TYPE_MASK;
  return type === T_OBJ || type === T_ARR ? tape[i + 2]! : i + 3;
}
