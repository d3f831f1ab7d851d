import { JobhookError } from '../errors.js';
import { scanNumber } from './parse-numbers.js';
import { ParseState } from './parse-state.js';
import { scanString } from './parse-strings.js';
import type { ParsedBody } from './tape.js';
import * as Tape from './tape.js';

/** Each literal by its first byte, with its tape kind (`-Infinity` is read with the numbers). */
const LITERALS: (readonly [word: string, kind: number] | undefined)[] = [];
for (const [word, kind] of [
  ['true', Tape.T_TRUE],
  ['false', Tape.T_FALSE],
  ['null', Tape.T_NULL],
  ['NaN', Tape.T_NAN],
  ['Infinity', Tape.T_INF],
] as const) {
  LITERALS[word.charCodeAt(0)] = [word, kind];
}

/**
 * The parser: a body's structure (values, containers, depth, the canonical bound) onto the tape,
 * the strings and numbers in it scanned by `parse-strings.ts` and `parse-numbers.ts`.
 * @internal
 */
export class Parser extends ParseState {
  /** Parses the whole body: one value with whitespace around it, an object when `requireObject`. */
  parseDocument(requireObject: boolean): ParsedBody {
    const b = this.b;
    if (this.n >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) this.pos = 3;
    this.skipWs();
    if (this.pos >= this.n) this.fail('Expecting value: the body is empty');
    this.value(0);
    this.skipWs();
    if (this.pos < this.n) this.fail('Extra data after the JSON value');
    if (requireObject && this.tape[0] !== Tape.T_OBJ) {
      throw new JobhookError('ERR_BODY_NOT_OBJECT', 'the body is JSON but not a JSON object');
    }
    this.checkBound();
    return {
      bytes: b,
      tape: this.tape,
      tapeLength: this.len,
      depth: this.deepest,
      features: this.features,
      canonicalBound: this.bound,
    };
  }

  private value(depth: number): void {
    const c = this.b[this.pos];
    switch (c) {
      case 0x7b: // {
        this.object(depth + 1);
        return;
      case 0x5b: // [
        this.array(depth + 1);
        return;
      case 0x22: // "
        scanString(this);
        return;
      default:
        if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
          scanNumber(this);
        } else {
          const literal = c === undefined ? undefined : LITERALS[c];
          if (literal === undefined) this.fail(c === undefined ? 'Expecting value: unexpected end of body' : 'Expecting value');
          this.literal(literal[0], literal[1]);
        }
    }
  }

  /**
   * Opens the container `kind` whose bracket is at `pos`, at `depth`: refuses a body nested too
   * deep, or whose bound is already too large (checked at every container, so a body built to blow
   * up stops the parse early); returns the container's tape index.
   */
  private open(kind: number, depth: number): number {
    if (depth > this.maxDepth) {
      throw new JobhookError('ERR_BODY_TOO_DEEP', `the body nests deeper than ${this.maxDepth} levels`, {
        detail: { offset: this.pos, limit: this.maxDepth },
      });
    }
    if (depth > this.deepest) this.deepest = depth;
    this.checkBound();
    const at = this.push(kind, 0, 0);
    this.pos++;
    this.skipWs();
    return at;
  }

  /** After a member: past the comma before another (true), or past the closing bracket `close` (false). */
  private another(close: number): boolean {
    this.skipWs();
    const c = this.b[this.pos];
    if (c === 0x2c) {
      this.pos++;
      this.skipWs();
      return true;
    }
    if (c !== close) this.fail("Expecting ',' delimiter");
    this.pos++;
    return false;
  }

  /**
   * Closes the container at tape index `at` with `count` members. Its share of the bound: brackets,
   * and per member a separator, a line break and 2 × depth spaces, plus the line break and
   * indentation before the closing bracket.
   */
  private close(at: number, depth: number, count: number): void {
    this.tape[at + 1] = count;
    this.tape[at + 2] = this.len;
    this.bound += count === 0 ? 2 : 2 + count * (2 + 2 * depth) + 1 + 2 * (depth - 1);
  }

  private object(depth: number): void {
    const at = this.open(Tape.T_OBJ, depth);
    const b = this.b;
    let count = 0;
    if (b[this.pos] === 0x7d) {
      this.pos++;
    } else {
      do {
        if (b[this.pos] !== 0x22) this.fail('Expecting property name enclosed in double quotes');
        scanString(this);
        this.skipWs();
        if (b[this.pos] !== 0x3a) this.fail("Expecting ':' delimiter");
        this.bound += 2; // ": " after the key
        this.pos++;
        this.skipWs();
        this.value(depth);
        count++;
      } while (this.another(0x7d));
    }
    this.close(at, depth, count);
  }

  private array(depth: number): void {
    const at = this.open(Tape.T_ARR, depth);
    let count = 0;
    if (this.b[this.pos] === 0x5d) {
      this.pos++;
    } else {
      do {
        this.value(depth);
        count++;
      } while (this.another(0x5d));
    }
    this.close(at, depth, count);
  }
}
