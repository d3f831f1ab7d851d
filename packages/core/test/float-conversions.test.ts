/**
 * Float work shared by the candidate forms of one body: each lexeme converted once for every form
 * (FloatConversions), a run of one lexeme repeated laid out once per form (RepeatedFloat). Neither
 * may change a byte: every form written with shared conversions, in any order of profiles and
 * modes, equals the same form written alone, and a body signed in any profile still verifies.
 */
import { constants, createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JobhookError, createVerifier } from '../src/index.js';
import { parseBody } from '../src/json/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { FloatConversions, FloatPass } from '../src/canonical/float-format.js';
import { CANONICAL_PROFILES, digestCanonical, type CanonicalProfile } from '../src/canonical/profiles.js';
import { createSharedKeyOrders } from '../src/canonical/shared-key-orders.js';
import { createTestKeyPair } from '../src/testing/index.js';
import { fixedCases, generatedBodies } from './differential/generators.js';
import { SHORTEST_17 } from './helpers/float-lexemes.js';

/** Lexemes on every path of the float formatting: fast, layout, converted, overflowing, integral, subnormal. */
const LEXEMES = [
  '1.7976931348623157e+308',
  '1.7976931348623157e308',
  '4.9e-324',
  '5e-324',
  '1.2345678901234567e-310',
  '0.12345678901234567',
  '0.1234567890123456',
  '0.10000000000000001',
  '1e400',
  '-1e400',
  '-1e-400',
  '-0.0',
  '0.0',
  '1.0',
  '1E+16',
  '1e16',
  '1e22',
  '1e-07',
  '123456789012345678901234567890.5',
  '2.5',
  '-2.5e-3',
  '12345678901234567890',
  '-0',
];

/** Each lexeme in a run of three, then all of them once, then a run of 80 17-digit lexemes (more than a pass's exact checks). */
const BODIES = [
  `{"runs": [${LEXEMES.flatMap((x) => [x, x, x]).join(', ')}], "once": [${LEXEMES.join(', ')}], "é": [${Array(80).fill('0.12345678901234567').join(',')}]}`,
  `{"a": ${'['.repeat(30)}${Array(100).fill('1.7976931348623157e+308').join(',')}${']'.repeat(30)}, "b": [4.9e-324, 4.9e-324, 1.0, 1.0, 0.10000000000000001]}`,
  `{"distinct": [${Array.from({ length: 100 }, (_, i) => `${1 + (i % 9)}.${String(7919 * i + 1234567890123456).padStart(16, '0')}e-31${i % 10}`).join(', ')}]}`,
];

const MODES = ['as-written', 'exact'] as const;

/** A digest, or the error code when the profile has no form for the body. */
function digestOrError(digest: () => string): string {
  try {
    return digest();
  } catch (err) {
    if (err instanceof JobhookError) return err.code;
    throw err;
  }
}
const FORMS = CANONICAL_PROFILES.flatMap((profile) => MODES.map((mode) => [profile, mode] as const));

describe('float conversions shared between the forms of one body', () => {
  it.each(BODIES.map((body, i) => ({ i, body })))('write the same bytes as each form alone (body $i)', ({ body }) => {
    const alone = new Map(FORMS.map(([p, m]) => [`${p}/${m}`, digestCanonical(parseBody(Buffer.from(body)), p, m)]));
    // Forwards, backwards and twice over: every form reads conversions another form made.
    for (const order of [FORMS, [...FORMS].reverse(), [...FORMS, ...FORMS]]) {
      const doc = parseBody(Buffer.from(body));
      const orders = createSharedKeyOrders(doc);
      const conversions = new FloatConversions(true);
      for (const [profile, mode] of order) {
        const key = `${profile}/${mode}`;
        expect(digestCanonical(doc, profile, mode, orders, undefined, new FloatPass(conversions)), key).toBe(alone.get(key));
      }
    }
  });

  it('write the same bytes as each form alone: the differential bodies, forms in reverse order', () => {
    const bodies = [...fixedCases().map((c) => c.body), ...fc.sample(generatedBodies, { seed: 0xf10a7, numRuns: 600 }).map((g) => g.body)];
    let compared = 0;
    for (const body of bodies) {
      let doc: ReturnType<typeof parseBody>;
      try {
        doc = parseBody(body);
      } catch {
        continue; // refused at the parse, as verification would
      }
      const orders = createSharedKeyOrders(doc);
      const conversions = new FloatConversions(true);
      for (const [profile, mode] of [...FORMS].reverse()) {
        const shared = digestOrError(() => digestCanonical(doc, profile, mode, orders, undefined, new FloatPass(conversions)));
        const alone = digestOrError(() => digestCanonical(parseBody(body), profile, mode));
        expect(shared, `${profile}/${mode} of ${Buffer.from(body).toString('utf8').slice(0, 200)}`).toBe(alone);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(4000);
  });

  it('write the exact forms as canonicalize does', () => {
    for (const body of BODIES) {
      const doc = parseBody(Buffer.from(body));
      const conversions = new FloatConversions(true);
      for (const profile of CANONICAL_PROFILES) {
        const expected = createHash('sha256').update(canonicalize(body, { profile })).digest('hex');
        expect(digestCanonical(doc, profile, 'exact', undefined, undefined, new FloatPass(conversions)), profile).toBe(expected);
      }
    }
  });
});

describe('an as-written pass over a body no reference serializer wrote', () => {
  it('has 64 shortest lexemes to check', () => expect(new Set(SHORTEST_17).size).toBe(64));

  const exact = (body: string) => digestCanonical(parseBody(Buffer.from(body)), 'python', 'exact');
  const asWritten = (body: string) => {
    const pass = new FloatPass();
    const digest = digestCanonical(parseBody(Buffer.from(body)), 'python', 'as-written', undefined, undefined, pass);
    return { digest, approximated: pass.approximated };
  };

  it('writes the rest exactly once a checked lexeme is not the shortest: no exact pass needed', () => {
    // Distinct lexemes (no run to copy): 0.1000000000000000k is not shortest for any k here.
    const body = `{"a": [${Array.from({ length: 200 }, (_, i) => `0.${String((i % 9) + 1).repeat(1)}000000000000000${(i % 7) + 1}`).join(', ')}]}`;
    expect(asWritten(body)).toEqual({ digest: exact(body), approximated: false });
  });

  it('approximates past the checks while every checked lexeme was the shortest', () => {
    const body = `{"a": [${[...SHORTEST_17, ...Array(100).fill('0.10000000000000001')].join(', ')}]}`;
    const pass = asWritten(body);
    expect(pass.approximated).toBe(true);
    expect(pass.digest).not.toBe(exact(body));
  });
});

describe('verification of float bodies', () => {
  const keys = createTestKeyPair();
  const verifier = createVerifier({ publicKeys: keys.publicKeyPem });
  const signatureOf = (body: string, profile: CanonicalProfile): string => {
    const digest = createHash('sha256').update(canonicalize(body, { profile })).digest('hex');
    return sign('sha256', Buffer.from(digest, 'latin1'), { key: keys.privateKey, padding: constants.RSA_PKCS1_PADDING }).toString('hex');
  };

  it.each(BODIES.map((body, i) => ({ i, body })))('finds the profile each body was signed in (body $i)', ({ body }) => {
    for (const profile of CANONICAL_PROFILES) {
      let signature: string;
      try {
        signature = signatureOf(body, profile);
      } catch {
        continue; // the profile has no form for this body (javascript and 1e400)
      }
      // The first profile that writes the signed bytes (python-ascii writes an ASCII body as python does).
      const found = verifier.verify({ body, signature }).profile;
      expect(canonicalize(body, { profile: found }).equals(canonicalize(body, { profile })), `${profile} verified as ${found}`).toBe(true);
    }
  });
});
