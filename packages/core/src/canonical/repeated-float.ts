import type { ByteWriter } from './byte-writer.js';

/** Longest float lexeme {@link RepeatedFloat} remembers; no profile writes a float longer than 24 bytes. */
const REPEAT_MAX_BYTES = 32;

/**
 * The last float lexeme a pass formatted and the bytes it wrote for it, so a run of one lexeme
 * repeated (an array of one float) is formatted once per pass and then copied: the writer compares
 * the lexeme's bytes instead of reading, converting and laying it out again.
 * @internal
 */
export class RepeatedFloat {
  private start = -1;
  private length = -1;
  /** Whether {@link out} holds the form of the lexeme at {@link start} (kept from its second occurrence on). */
  private held = false;
  /** The lexeme being written repeats the last one: {@link remember} keeps its form. */
  private repeating = false;
  private readonly out = new Uint8Array(REPEAT_MAX_BYTES);
  private outLength = 0;

  /** Forgets the lexeme remembered (a new pass, or another body: the offsets mean nothing there). */
  reset(): void {
    this.start = -1;
    this.length = -1;
    this.held = false;
  }

  /**
   * When `b[start, end)` is the lexeme remembered and its form is held, writes that form and answers
   * true. Otherwise, when the lexeme is short enough to remember, reserves room for its form in `w`
   * (so its bytes stay in one piece for {@link remember}) and answers false.
   */
  writeRepeat(b: Uint8Array, start: number, end: number, w: ByteWriter): boolean {
    const n = end - start;
    this.repeating = false;
    if (n > REPEAT_MAX_BYTES) return false;
    if (n === this.length) {
      const last = this.start;
      let k = 0;
      while (k < n && b[start + k] === b[last + k]) k++;
      if (k === n) {
        if (!this.held) {
          this.repeating = true;
          w.ensure(REPEAT_MAX_BYTES);
          return false;
        }
        const m = this.outLength;
        w.ensure(m);
        const buf = w.buf;
        const out = this.out;
        let p = w.pos;
        for (let i = 0; i < m; i++) buf[p++] = out[i]!;
        w.pos = p;
        return true;
      }
    }
    w.ensure(REPEAT_MAX_BYTES);
    return false;
  }

  /**
   * Remembers that `b[start, end)` was written as `w.buf[from, w.pos)` (after a {@link writeRepeat}
   * that answered false): its position always, its form only once it repeats (distinct lexemes,
   * the common case, copy nothing).
   */
  remember(start: number, end: number, w: ByteWriter, from: number): void {
    const n = end - start;
    const m = w.pos - from;
    if (n > REPEAT_MAX_BYTES || m > REPEAT_MAX_BYTES || m < 0) return;
    this.start = start;
    this.length = n;
    this.held = this.repeating;
    if (!this.repeating) return;
    const buf = w.buf;
    const out = this.out;
    for (let i = 0; i < m; i++) out[i] = buf[from + i]!;
    this.outLength = m;
  }
}
