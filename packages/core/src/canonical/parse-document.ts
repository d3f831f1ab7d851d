import { JobhookError } from '../errors.js';
import { scanNumber } from './parse-numbers.js';
import { ParseState } from './parse-state.js';
import { scanString } from './parse-strings.js';
import * as Tape from './tape.js';

/**
 * The parser: a body's structure (values, containers, depth, the canonical bound) onto the tape,
 * the strings and numbers in it scanned by `parse-strings.ts` and `parse-numbers.ts`.
 * @internal
 */
export class Parser extends ParseState {
  /** Parses the whole body: one value with whitespace around it, an object when `requireObject`. */
  parseDocument(requireObject: boolean): Tape.ParsedBody {
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
      case 0x74: // t
        this.literal('true', Tape.T_TRUE);
        return;
      case 0x66: // f
        this.literal('false', Tape.T_FALSE);
        return;
      case 0x6e: // n
        this.literal('null', Tape.T_NULL);
        return;
      case 0x4e: // N
        this.literal('NaN', Tape.T_NAN);
        return;
      case 0x49: // I
        this.literal('Infinity', Tape.T_INF);
        return;
      default:
        if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
          scanNumber(this);
          return;
        }
        this.fail(c === undefined ? 'Expecting value: unexpected end of body' : 'Expecting value');
    }
  }

  private enter(depth: number): void {
    if (depth > this.maxDepth) {
      throw new JobhookError('ERR_BODY_TOO_DEEP', `the body nests deeper than ${this.maxDepth} levels`, {
        detail: { offset: this.pos, limit: this.maxDepth },
      });
    }
    if (depth > this.deepest) this.deepest = depth;
    // Checked at every container, so a body built to blow up stops the parse early.
    this.checkBound();
  }

  /**
   * A container at `depth` with `count` members: brackets, and per member a separator, a line
   * break and 2 × depth spaces, plus the line break and indentation before the closing bracket.
   */
  private containerBound(depth: number, count: number): void {
    this.bound += count === 0 ? 2 : 2 + count * (2 + 2 * depth) + 1 + 2 * (depth - 1);
  }

  private object(depth: number): void {
    this.enter(depth);
    const at = this.push(Tape.T_OBJ, 0, 0);
    const b = this.b;
    this.pos++;
    this.skipWs();
    let count = 0;
    if (b[this.pos] === 0x7d) {
      this.pos++;
    } else {
      for (;;) {
        if (b[this.pos] !== 0x22) this.fail('Expecting property name enclosed in double quotes');
        scanString(this);
        this.skipWs();
        if (b[this.pos] !== 0x3a) this.fail("Expecting ':' delimiter");
        this.bound += 2; // ": " after the key
        this.pos++;
        this.skipWs();
        this.value(depth);
        count++;
        this.skipWs();
        const c = b[this.pos];
        if (c === 0x2c) {
          this.pos++;
          this.skipWs();
        } else if (c === 0x7d) {
          this.pos++;
          break;
        } else {
          this.fail("Expecting ',' delimiter");
        }
      }
    }
    this.tape[at + 1] = count;
    this.tape[at + 2] = this.len;
    this.containerBound(depth, count);
  }

  private array(depth: number): void {
    this.enter(depth);
    const at = this.push(Tape.T_ARR, 0, 0);
    const b = this.b;
    this.pos++;
    this.skipWs();
    let count = 0;
    if (b[this.pos] === 0x5d) {
      this.pos++;
    } else {
      for (;;) {
        this.value(depth);
        count++;
        this.skipWs();
        const c = b[this.pos];
        if (c === 0x2c) {
          this.pos++;
          this.skipWs();
        } else if (c === 0x5d) {
          this.pos++;
          break;
        } else {
          this.fail("Expecting ',' delimiter");
        }
      }
    }
    this.tape[at + 1] = count;
    this.tape[at + 2] = this.len;
    this.containerBound(depth, count);
  }
}
