import type { ByteWriter } from './byte-writer.js';
import { lastLexemeConverted, writeFloatLexeme } from './float-digits.js';
import type { FloatMode, FloatPass } from './float-format.js';
import { RepeatedFloat } from './repeated-float.js';
import { latin1 } from './strings.js';
import type { TapeProfile } from './tape-profiles.js';

/** The last float of the pass being written. Process-wide: serialization is synchronous, so one serves every pass. */
const REPEATED = new RepeatedFloat();

/** Lexeme bytes up to which {@link RepeatedFloat} reserves room, so a float's form is in one piece of the window. */
const REPEATED_ROOM = 32;

/**
 * Writes the floats of one pass in a Python-family profile whose lexeme is not already `repr`'s form
 * (the parse flags those, `F_FLT_REPR`, and the walker copies them): in `floatMode`,
 * converting a lexeme only where its digits do not settle its form, each lexeme once per body when
 * the pass's conversions are shared, and a run of one lexeme once per pass.
 * @internal
 */
export class PythonFloats {
  private readonly repeated = REPEATED;

  constructor(
    private readonly b: Buffer,
    private readonly w: ByteWriter,
    private readonly profile: TapeProfile,
    private readonly floatMode: FloatMode,
    /** This pass's float state (a new pass starts from the same state, so a form written twice is the same bytes). */
    private readonly pass: FloatPass,
  ) {
    REPEATED.reset();
  }

  /**
   * A 16–17-digit float already in Python's fixed layout: as written, or kept when it is the shortest
   * form (a run of one lexeme is decided once, {@link RepeatedFloat}).
   */
  layoutFloat(start: number, end: number): void {
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
  float(start: number, end: number, floatMode: FloatMode = this.floatMode): void {
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
