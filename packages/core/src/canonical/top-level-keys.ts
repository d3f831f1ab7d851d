import { asBuffer, decodeString } from './strings.js';
import type { ParsedBody } from './tape.js';
import * as Tape from './tape.js';

/**
 * How many members of a parsed body's top-level object are named `key` (however the body spells
 * it: `"job\u005fid"` is `job_id`); 0 when the top-level value is not an object. The parser keeps
 * duplicate keys on the tape and the value builders keep the last, as Python does, while other
 * parsers keep the first: a caller that trusts one member's value refuses a body that names it twice.
 * Visits the root's members only, skipping each value whole: work in their count, not in the body.
 *
 * @example
 * ```ts
 * countTopLevelKey(parseBody(Buffer.from('{"job_id":"a","job_id":"b"}')), 'job_id') // 2
 * ```
 * @internal
 */
export function countTopLevelKey(doc: ParsedBody, key: string): number {
  const { tape } = doc;
  if ((tape[0]! & Tape.TYPE_MASK) !== Tape.T_OBJ) return 0;
  const bytes = asBuffer(doc.bytes);
  const members = tape[1]!;
  let count = 0;
  let at = 3;
  for (let m = 0; m < members; m++) {
    if (decodeString(bytes, tape[at]!, tape[at + 1]!, tape[at + 2]!) === key) count++;
    at = Tape.indexAfter(tape, at + 3);
  }
  return count;
}
