/**
 * Bounded work for signed bodies: a real signature over another body makes verification write the
 * body's candidate forms. Each object's keys are sorted once per sort rule and the order shared,
 * each float converted once for every form (the forms must not change), the later profiles written
 * exactly only once a pass could differ from its exact form (so at most one form per profile plus
 * one), and a per-request work budget stops what is left (a 401 like a mismatch, cause
 * `work-budget`), above what every vector needs.
 */
import { constants, createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JobhookError, createVerifier, type CanonicalProfile } from '../src/index.js';
import { parseBody } from '../src/json/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { CANONICAL_PROFILES, digestCanonical } from '../src/canonical/profiles.js';
import { createSharedKeyOrders } from '../src/canonical/shared-key-orders.js';
import { WorkBudget, WorkBudgetExhausted } from '../src/canonical/work-budget.js';
import { createTestKeyPair } from '../src/testing/index.js';
import { SHORTEST_17 } from './helpers/float-lexemes.js';
import { loadVectors } from './helpers/signature-vectors.js';

const keys = createTestKeyPair();

function rsaSignHex(digest: string): string {
  return sign('sha256', Buffer.from(digest, 'latin1'), { key: keys.privateKey, padding: constants.RSA_PKCS1_PADDING }).toString('hex');
}
const signatureOf = (body: string, profile: CanonicalProfile = 'python') =>
  rsaSignHex(createHash('sha256').update(canonicalize(body, { profile })).digest('hex'));
const otherBody = rsaSignHex(createHash('sha256').update('another body').digest('hex'));

function verifyError(verify: () => unknown): JobhookError {
  try {
    verify();
  } catch (err) {
    if (err instanceof JobhookError) return err;
    throw err;
  }
  throw new Error('verified');
}

/**
 * Deep indentation makes each form ~20× the body (under orjson's 255 levels, so every profile can
 * write it); 64 shortest 17-digit floats (a pass's exact checks, all passed) then 4,000 non-shortest
 * ones make the python profile write it as written and exactly; a non-ASCII key sets python-ascii
 * apart, `1e-07` orjson (`1e-7`) and javascript (`1e-7`). Were python-ascii and orjson written both
 * ways too, that would be seven forms of ~1.7 MB (12 MB) against a budget of 9 MB (5 × the
 * canonical bound, 4 profiles).
 */
const DEPTH = 200;
const FLOATS = [...SHORTEST_17, ...Array(4000).fill('0.10000000000000001')].join(',');
const DEEP = `{"é": 1, "e": 1e-07, "x": ${'['.repeat(DEPTH)}${FLOATS}${']'.repeat(DEPTH)}}`;

describe('the verification work budget', () => {
  const verifier = createVerifier({ publicKeys: keys.publicKeyPem });

  it('writes the later profiles exactly only: five forms, within the budget, every profile tried', () => {
    const err = verifyError(() => verifier.verify({ body: DEEP, signature: otherBody }));
    expect(err.code).toBe('ERR_SIGNATURE_INVALID');
    expect(err.status).toBe(401);
    expect(err.detail).toMatchObject({ cause: 'body-mismatch', profiles: 4 });
  });

  it('verifies the same body signed in each profile', () => {
    for (const profile of CANONICAL_PROFILES) {
      const found = verifier.verify({ body: DEEP, signature: signatureOf(DEEP, profile) }).profile;
      expect(canonicalize(DEEP, { profile: found }).equals(canonicalize(DEEP, { profile })), `${profile} verified as ${found}`).toBe(true);
    }
  });

  it('stops a form that outgrows it', () => {
    const doc = parseBody(Buffer.from(DEEP));
    const size = canonicalize(DEEP).length;
    expect(() => digestCanonical(doc, 'python', 'exact', undefined, new WorkBudget(size - 1))).toThrow(WorkBudgetExhausted);
    expect(() => digestCanonical(doc, 'python', 'exact', undefined, new WorkBudget(size))).not.toThrow();
  });

  it('never stops the first profile: the same body signed by the service verifies', () => {
    expect(verifier.verify({ body: DEEP, signature: signatureOf(DEEP) }).profile).toBe('python');
  });

  it('sits above every vector: a signature over another body is a plain mismatch for each', () => {
    const loaded = loadVectors();
    if (loaded.error !== null) throw new Error(loaded.error);
    const all = createVerifier({ publicKeys: keys.publicKeyPem });
    let checked = 0;
    for (const c of loaded.cases) {
      const err = verifyError(() => all.verify({ body: c.body, signature: otherBody }));
      if (err.code !== 'ERR_SIGNATURE_INVALID') continue; // malformed bodies stop at the parse
      expect(err.detail, c.id).toMatchObject({ cause: 'body-mismatch' });
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });
});

describe('key orders shared between candidate forms', () => {
  // Keys whose code-point and UTF-16 orders differ, array-index keys, duplicates, __proto__, escapes,
  // in objects above and below the small-object sort, flat and nested.
  const keysOf = (n: number) =>
    Array.from(
      { length: n },
      (_, i) => ['😀', '\uff61', 'é', '10', '9', '__proto__', 'a\\u00e9', 'z', '\u4e2d'][i % 9]! + (i % 3 ? String(i) : ''),
    );
  const object = (n: number, nested: boolean): string =>
    `{${keysOf(n)
      .map((k, i) => `"${k}": ${nested && i % 5 === 0 ? object(Math.min(n, 30), false) : i % 4 === 0 ? '0.12345678901234567' : i}`)
      .join(', ')}}`;
  const BODIES = [
    object(10, false),
    object(40, false),
    object(40, true),
    object(200, true),
    '{"b": 1, "a": 2, "b": 3, "😀": 4, "\uff61": 5}',
    // Plain ASCII keys only (javascript writes them from the python order): duplicates, nesting, empty objects, near misses.
    '{"b": {"y": 1, "x": [1.0, -0, 12345678901234567, {}]}, "a": 2, "a": 3, "c": {}, "__protoX": 1, "a1": {"k": "v", "K": "w", "_": 0}}',
  ];

  it.each(BODIES.map((body, i) => ({ i, body })))('write the same bytes as unshared sorting (body $i)', ({ body }) => {
    const doc = parseBody(Buffer.from(body));
    const orders = createSharedKeyOrders(doc);
    // Twice over: the second round reads every order from the tables.
    for (let round = 0; round < 2; round++) {
      for (const profile of CANONICAL_PROFILES) {
        for (const mode of ['as-written', 'exact'] as const) {
          expect(digestCanonical(doc, profile, mode, orders), `${profile} ${mode} round ${round}`).toBe(
            digestCanonical(parseBody(Buffer.from(body)), profile, mode),
          );
        }
      }
    }
  });
});
