import { JobhookError } from '../errors.js';
import * as Tape from './tape.js';

/**
 * The state of one parse, shared by the scanners of containers (`parse-document.ts`), strings
 * (`parse-strings.ts`) and numbers (`parse-numbers.ts`): the bytes and the position in them, the
 * tape being filled, and what the body is found to hold. Its fields are read and written in the
 * innermost loops of every parse, so they are plain fields, not accessors.
 * @internal
 */
export class ParseState {
  readonly b: Uint8Array;
  readonly n: number;
  pos = 0;
  tape: Int32Array;
  len = 0;
  readonly maxDepth: number;
  deepest = 0;
  /** Surrogate flags of the string being scanned, set by its escapes and UTF-8 sequences. */
  surrogateFlags = 0;
  /** OR of every string's flags, and the F_DOC_* features. */
  features = 0;
  /**
   * Upper bound of the canonical size in every profile, in bytes, kept as the parse goes: each
   * value's lexeme bound plus its line break and indentation (known exactly from the depth).
   */
  bound = 0;
  readonly maxCanonicalBytes: number;

  constructor(bytes: Uint8Array, maxDepth: number, maxCanonicalBytes: number, tape: Int32Array | undefined) {
    this.b = bytes;
    this.n = bytes.length;
    this.maxDepth = maxDepth;
    this.maxCanonicalBytes = maxCanonicalBytes;
    // About one entry per 8 body bytes is typical of JSON; the tape grows when it is not enough.
    this.tape = tape ?? new Int32Array(Math.max(48, Math.ceil(bytes.length / 8) * 3));
  }

  /** Refuses the body once its canonical bound passes the limit. */
  checkBound(): void {
    if (this.bound > this.maxCanonicalBytes) {
      throw new JobhookError(
        'ERR_CANONICAL_TOO_LARGE',
        `the canonical form of this body may reach ${this.bound} bytes; the limit is ${this.maxCanonicalBytes}`,
        { detail: { offset: this.pos, bound: this.bound, limit: this.maxCanonicalBytes } },
      );
    }
  }

  /** Refuses the body as malformed at the current position. */
  fail(message: string): never {
    throw new JobhookError('ERR_BODY_MALFORMED', `${message} (byte ${this.pos})`, { detail: { offset: this.pos } });
  }

  /** Appends the tape entry `[kind, a, bEnd]`, growing the tape when full; returns its index. */
  push(kind: number, a: number, bEnd: number): number {
    let tape = this.tape;
    const at = this.len;
    if (at + 3 > tape.length) {
      const grown = new Int32Array(tape.length * 2);
      grown.set(tape);
      this.tape = tape = grown;
    }
    tape[at] = kind;
    tape[at + 1] = a;
    tape[at + 2] = bEnd;
    this.len = at + 3;
    return at;
  }

  /** Moves past JSON whitespace. */
  skipWs(): void {
    const b = this.b;
    let p = this.pos;
    for (;;) {
      const c = b[p];
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  /** Scans the literal `word` at the current position as a `kind` entry. */
  literal(word: string, kind: number): void {
    const b = this.b;
    const p = this.pos;
    for (let i = 0; i < word.length; i++) {
      if (b[p + i] !== word.charCodeAt(i)) this.fail('Expecting value');
    }
    this.pos = p + word.length;
    if (kind >= Tape.T_NAN) this.features |= Tape.F_DOC_NONFINITE;
    this.bound += 9; // "-Infinity", the longest spelling of any literal in any profile
    this.push(kind, 0, 0);
  }
}
