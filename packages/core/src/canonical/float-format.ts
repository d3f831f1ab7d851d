import type { ByteWriter } from './byte-writer.js';
import { bytesEqual, latin1 } from './strings.js';

/**
 * What the float writers share beyond one float: how a lexeme becomes a profile's form
 * ({@link FloatMode}), what a layout is ({@link FloatLayout}), the conversions shared by every form
 * of one body ({@link FloatConversions}) and the state of one pass ({@link FloatPass}). The digits
 * and the layouts themselves are in `float-digits.ts`.
 */

/** A float layout: writes the float `float-digits.ts` holds loaded (its digits, decimal point and sign). @internal */
export type FloatLayout = (w: ByteWriter) => void;

/**
 * How a float lexeme becomes the profile's form.
 * - `exact`: the shortest round-trip digits of the double it reads as, as Python's `repr` prints them;
 * - `as-written`: the lexeme's own digits, laid out in the profile's notation, without converting
 *   anything when it has at most 17 significant digits. Equal to `exact` for every lexeme that is
 *   already a shortest form (whatever Python, JavaScript or orjson wrote), and far cheaper; verification
 *   tries it first and falls back to `exact` when it did not match and {@link FloatPass.approximated} says
 *   that the two could differ. The first {@link EXACT_CHECKS_PER_PASS} lexemes of 16–17 digits of a
 *   pass are written exactly all the same: every reference serializer writes the shortest form, so
 *   this loses no signer's bytes, and a body with a few such floats needs no second, exact pass.
 * @internal
 */
export type FloatMode = 'exact' | 'as-written';

/**
 * Lexemes of 16–17 digits converted per `as-written` pass (each ~0.2 µs): enough that a body with
 * a handful of long floats is written exactly in one pass, too few to matter where a body has
 * thousands (embeddings), which are written as they stand.
 * @internal
 */
export const EXACT_CHECKS_PER_PASS = 64;

/**
 * The float work of one body shared by every form written of it: the engine's shortest round-trip
 * text of each lexeme that needs it (`String(Number(lexeme))`) and what each float layout made of
 * a converted lexeme, each worked out once however many forms are written (verification writes up to
 * five; a body of floats the fast paths cannot lay out, such as exponents beyond ±290, subnormals or
 * 16+ digits written exactly, would otherwise pay a conversion and a layout per float per form).
 * Slots are indexed by the lexeme's offset in the body divided by 4 (converted lexemes are at least
 * 3 bytes and separated by at least one byte, so no two share a slot), so it serves one body only;
 * a lexeme equal to the one before it (a run of one float repeated) is answered by comparing bytes.
 *
 * Memory, when shared: a slot array of a quarter of the body's length per kind used (shortest,
 * python layout, orjson layout), allocated on first use, and a string per float converted; about
 * 11 MB for a 1 MB body of distinct floats, dropped with the verification.
 * @internal
 */
export class FloatConversions {
  /**
   * @param shared whether several forms of the body will be written with these conversions (then
   *   each is kept for the others); a lone form keeps nothing but the last lexeme, since keeping costs
   *   more than it saves there.
   */
  constructor(readonly shared = false) {}

  private texts: (string | undefined)[] | undefined;
  private forms: Map<FloatLayout, (string | undefined)[]> | undefined;
  private lastStart = -1;
  private lastEnd = -1;
  private lastText = '';

  /** Whether the lexeme `b[start, end)` is already `String(Number(lexeme))`. */
  isShortest(b: Uint8Array, start: number, end: number): boolean {
    if (this.shared) return bytesEqual(b, start, end, this.shortest(b, start, end));
    const text = latin1(b, start, end);
    return String(Number(text)) === text;
  }

  /** `String(Number(text))` of the lexeme `b[start, end)` of this body: `Infinity` or `-Infinity` when it overflows. */
  shortest(b: Uint8Array, start: number, end: number): string {
    if (!this.shared) return String(Number(latin1(b, start, end)));
    const n = end - start;
    const last = this.lastStart;
    if (n === this.lastEnd - last) {
      let k = 0;
      while (k < n && b[start + k] === b[last + k]) k++;
      if (k === n) return this.lastText;
    }
    this.texts ??= slots(b);
    let text = this.texts[start >> 2];
    if (text === undefined) {
      text = String(Number(latin1(b, start, end)));
      this.texts[start >> 2] = text;
    }
    this.lastStart = start;
    this.lastEnd = end;
    this.lastText = text;
    return text;
  }

  /** What `layout` wrote for the converted lexeme at `start`, if it was remembered. */
  formed(layout: FloatLayout, start: number): string | undefined {
    return this.forms?.get(layout)?.[start >> 2];
  }

  /** Remembers what `layout` wrote for the converted lexeme `b[start, …)`. */
  remember(layout: FloatLayout, b: Uint8Array, start: number, form: string): void {
    if (!this.shared) return;
    this.forms ??= new Map();
    let slotsOfLayout = this.forms.get(layout);
    if (slotsOfLayout === undefined) {
      slotsOfLayout = slots(b);
      this.forms.set(layout, slotsOfLayout);
    }
    slotsOfLayout[start >> 2] = form;
  }
}

/** One slot per 4 bytes of `b`. */
function slots(b: Uint8Array): (string | undefined)[] {
  return new Array<string | undefined>((b.length >> 2) + 1);
}

/**
 * The float state of one serialization pass, created by whoever starts the pass and handed down:
 * whether a float was written `as-written` with more than 15 digits (so the `exact` form could
 * differ), how many exact checks the pass has left, and the body's {@link FloatConversions} (shared
 * by the passes over one body when given, else the pass's own).
 * @internal
 */
export class FloatPass {
  /** True once a float of this pass was written `as-written` with more than 15 digits. */
  approximated = false;
  private exactChecksLeft = EXACT_CHECKS_PER_PASS;
  private exactRest = false;

  /**
   * A checked lexeme was not its value's shortest form: no reference serializer wrote this body, so
   * writing the rest as written would only make a form that matches nothing and needs an exact pass
   * after it; instead every later check is granted, and the pass writes the exact form.
   */
  notShortest(): void {
    this.exactRest = true;
  }

  constructor(readonly conversions: FloatConversions = new FloatConversions()) {}

  /**
   * In an `as-written` pass, whether the next 16–17-digit lexeme is converted exactly instead (true
   * for the first {@link EXACT_CHECKS_PER_PASS} of the pass).
   */
  spendExactCheck(): boolean {
    if (this.exactRest) return true;
    if (this.exactChecksLeft === 0) return false;
    this.exactChecksLeft--;
    return true;
  }
}
