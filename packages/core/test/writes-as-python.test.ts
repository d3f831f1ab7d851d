/**
 * The checks that let verification skip a candidate form: orjson and javascript write a body as the
 * python profile does. A wrong `true` would skip a form a signer used (a valid delivery refused), so
 * every `true` is checked against the forms themselves, over the differential generator's bodies and
 * over lexemes at each boundary where the notations part; a `true` must also come where expected, or
 * the skip never happens.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JobhookError } from '../src/index.js';
import { parseBody } from '../src/json/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { FloatConversions } from '../src/canonical/float-format.js';
import type { CanonicalProfile } from '../src/canonical/profiles.js';
import { javascriptWritesAsPython, orjsonWritesAsPython } from '../src/canonical/writes-as-python.js';
import { fixedCases, generatedBodies } from './differential/generators.js';

function form(body: Uint8Array, profile: CanonicalProfile): Buffer | undefined {
  try {
    return canonicalize(body, { profile });
  } catch (err) {
    if (err instanceof JobhookError) return undefined;
    throw err;
  }
}

const CHECKS = [
  ['javascript', javascriptWritesAsPython],
  ['orjson', orjsonWritesAsPython],
] as const;

/** For each check: how many bodies it answered true for (each verified to be the same bytes). */
function checkAll(bodies: readonly Uint8Array[]): Record<string, number> {
  const same: Record<string, number> = { javascript: 0, orjson: 0 };
  for (const body of bodies) {
    let doc: ReturnType<typeof parseBody>;
    try {
      doc = parseBody(body);
    } catch {
      continue; // not a body the verifier would get this far with
    }
    const python = form(body, 'python');
    for (const [profile, check] of CHECKS) {
      if (!check(doc, new FloatConversions())) continue;
      const other = form(body, profile);
      const what = `${profile} on ${Buffer.from(body).toString('utf8').slice(0, 300)}`;
      // Neither may have a form (a lone surrogate): verification skips only after hashing python's.
      if (python === undefined) expect(other, what).toBeUndefined();
      else expect(other?.equals(python), what).toBe(true);
      same[profile]!++;
    }
  }
  return same;
}

/** Lexemes around every boundary: integral values, 1e-4/1e-5/1e-6, 1e16/1e21, one- and two-digit exponents, overflow, subnormals. */
const LEXEMES = [
  '0.5',
  '1.5',
  '-2.25',
  '1.0',
  '-0.0',
  '0.0',
  '100.0',
  '1e2',
  '1.5e1',
  '0.0001',
  '0.00001',
  '0.000123',
  '0.0000123',
  '1e-4',
  '1e-5',
  '1e-6',
  '1e-7',
  '1.5e-7',
  '1e-9',
  '1e-10',
  '1.5e-10',
  '1e15',
  '1e16',
  '1.5e16',
  '1e17',
  '1e20',
  '1e21',
  '1e22',
  '1.5e22',
  '123456789012345678.5',
  '9999999999999999.9',
  '0.99999999999999999',
  '1.7976931348623157e+308',
  '4.9e-324',
  '1.2345678901234567e-310',
  '1e400',
  '-1e-400',
  '0.12345678901234567',
  '0.1234567890123456',
  '12.5E+0',
];
const KEYS = ['a', 'b', 'A', '_', '', '__proto__', '0', '1a', '10', 'é', '\\u0061', 'z😀'];

describe('orjson and javascript written as python', () => {
  it('answer true only where the forms are the same bytes: boundary lexemes and keys', () => {
    const bodies: Uint8Array[] = [];
    for (const x of LEXEMES) {
      bodies.push(Buffer.from(`{"a": ${x}, "b": [${x}, ${x}], "c": "é"}`));
      bodies.push(Buffer.from(`{"a": [0.5, ${x}]}`));
    }
    for (const k of KEYS) bodies.push(Buffer.from(`{"${k}": 0.5, "b": {"${k}": 1, "a": 2}}`));
    const same = checkAll(bodies);
    // Where both must hold: fractions in fixed range, plain keys.
    expect(same.javascript).toBeGreaterThan(20);
    expect(same.orjson).toBeGreaterThan(20);
  });

  it('answer true only where the forms are the same bytes: the differential bodies', () => {
    const bodies = [
      ...fixedCases().map((c) => c.body),
      ...fc.sample(generatedBodies, { seed: 0x5eed_f10a, numRuns: 1500 }).map((g) => g.body),
    ];
    const same = checkAll(bodies);
    expect(same.javascript).toBeGreaterThan(0);
    expect(same.orjson).toBeGreaterThan(0);
  });

  it('answer true for deep arrays of one float, false once one float is written otherwise', () => {
    const deep = (floats: string) => parseBody(Buffer.from(`{"note": "é", "pad": ${'['.repeat(125)}${floats}${']'.repeat(125)}}`));
    const max = Array(100).fill('1.7976931348623157e+308').join(',');
    expect(javascriptWritesAsPython(deep(max), new FloatConversions())).toBe(true);
    expect(orjsonWritesAsPython(deep(max), new FloatConversions())).toBe(false); // 1.7976931348623157e308
    expect(javascriptWritesAsPython(deep(`${max},1.0`), new FloatConversions())).toBe(false); // 1
    const fixed = Array(100).fill('0.12345678901234567').join(',');
    expect(orjsonWritesAsPython(deep(fixed), new FloatConversions())).toBe(true);
    expect(javascriptWritesAsPython(deep(fixed), new FloatConversions())).toBe(true);
    expect(orjsonWritesAsPython(deep(`${fixed},1e-5`), new FloatConversions())).toBe(false); // 1e-05 against 0.00001
  });
});
