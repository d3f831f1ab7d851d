/**
 * The parse's canonical-size bound must be an upper bound of every profile's output: the receiver
 * refuses by it (ERR_CANONICAL_TOO_LARGE) before writing anything, so an under-estimate would let
 * work past the limit through, and an over-estimate far above the truth would refuse real payloads.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JobhookError } from '../src/index.js';
import { parseBody } from '../src/json/index.js';
import { CANONICAL_PROFILES, serializeCanonical } from '../src/canonical/index.js';

function check(text: string | Buffer): void {
  const doc = parseBody(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'), { maxBodyBytes: 1e8, maxDepth: 2000 });
  for (const profile of CANONICAL_PROFILES) {
    let written: number;
    try {
      written = serializeCanonical(doc, profile).length;
    } catch (err) {
      if (err instanceof JobhookError && err.code === 'ERR_CANONICAL_UNREPRESENTABLE') continue;
      throw err;
    }
    expect(written, `${profile}: ${String(text).slice(0, 80)}`).toBeLessThanOrEqual(doc.canonicalBound);
  }
}

describe('the canonical-size bound', () => {
  it.each([
    ['one member', '{"a":1}'],
    ['5,000 members', `{${Array.from({ length: 5000 }, (_, i) => `"${i}":0`).join(',')}}`],
    [
      'nested objects of short keys',
      `${'{"a":'.repeat(55)}{${Array.from({ length: 3000 }, (_, i) => `"k${i}":0`).join(',')}}${'}'.repeat(55)}`,
    ],
    ['16-digit integers the javascript profile rounds up', `{"a":[${Array(100).fill('9999999999999999').join(',')}]}`],
    ['deep arrays', `{"a":${'['.repeat(1500)}${']'.repeat(1500)}}`],
    ['empty containers', `{"a":[${Array(1000).fill('[],{}').join(',')}]}`],
    ['floats that grow', `{"a":[1e5,1e-5,5e-324,1e22,1e400,1E15,0.1e1,-0.0,100.000]}`],
    ['DEL, astral and escapes', `{"a":"\u007f😀\\ud83d\\ude00\\u00e9\\n\\/"}`],
  ])('holds for %s', (_name, text) => check(text));

  it('holds for raw UTF-8-encoded surrogates', () => {
    check(Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]), Buffer.from('"}')]));
  });

  it('holds for generated JSON in several layouts', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(0, 2), (value, indent) => {
        check(JSON.stringify({ v: value }, null, indent));
      }),
      { numRuns: 1500 },
    );
  });
});
