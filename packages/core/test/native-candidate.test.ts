/**
 * The native first candidate (`JSON.parse`, a sorted copy, `JSON.stringify(v, null, 2)`, one hash)
 * must give exactly the exact path's answers: the same digest as python3's `json.dumps(v,
 * sort_keys=True, indent=2, ensure_ascii=False)` whenever it answers, the same payload as
 * `toValue(parseBody(body))`, and verification with it and without it must agree on every body,
 * accepted or refused. Each guard is checked by a body its absence would get wrong.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { JobhookError } from '../src/index.js';
import { canonicalize, type CanonicalProfile } from '../src/canonical/index.js';
import { parseBody, toValue } from '../src/json/index.js';
import { NATIVE_MIN_BYTES, nativeFirstPays, nativePythonCandidate } from '../src/canonical/native-candidate.js';
import type { ParseRun } from '../src/canonical/parse.js';
import { DEFAULT_MAX_DEPTH } from '../src/canonical/canonical-option-checks.js';
import { CANONICAL_PROFILES } from '../src/canonical/profiles.js';
import { createKeyRing } from '../src/keys/key-ring.js';
import type { RecoveredDigest } from '../src/signature/recover-digest.js';
import { verifyRecovered } from '../src/signature/verifier.js';
import { createTestKeyPair } from '../src/testing/index.js';
import { fixedCases, generatedBodies } from './differential/generators.js';
import { streamPythonOracle, type OracleResult } from './helpers/python-oracle.js';

const RUNS = 3000;
const SEED = 0x5eed_7a7e;
const BIG = 64 * 1024 * 1024;

const ringKey = createKeyRing(createTestKeyPair().publicKey).keys[0]!;
const sha256Hex = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

/** What a signature over `digestHex` recovers to under the test key. */
function recoveredFor(digestHex: string): RecoveredDigest[] {
  return [{ key: ringKey, hash: createHash('sha256').update(digestHex).digest() }];
}

const run = (nativeFirst: boolean, limits: Partial<ParseRun> = {}): ParseRun => ({
  maxBodyBytes: BIG,
  maxDepth: DEFAULT_MAX_DEPTH,
  maxCanonicalBytes: BIG,
  nativeFirst,
  ...limits,
});

/** The verifier's answer, as comparable data (the canonical bytes included). */
function outcome(body: Buffer, digestHex: string, nativeFirst: boolean, limits?: Partial<ParseRun>): unknown {
  try {
    const r = verifyRecovered(body, recoveredFor(digestHex), CANONICAL_PROFILES, run(nativeFirst, limits), 'bigint');
    return { profile: r.profile, digest: r.digest, keyId: r.keyId, payload: r.payload, canonical: r.canonical.toString('hex') };
  } catch (err) {
    if (err instanceof JobhookError) return { code: err.code, cause: (err.detail as { cause?: string } | undefined)?.cause };
    throw err;
  }
}

/** The digest a signer of `profile` signs for `body`, or a digest of nothing when that profile cannot write it. */
function signedDigest(body: Buffer, profile: CanonicalProfile): string {
  try {
    return sha256Hex(canonicalize(body, { profile }));
  } catch {
    return sha256Hex('not this body');
  }
}

/** Verification agrees with and without the native candidate, for a signer of each profile. */
function expectSameVerdicts(body: Buffer, limits?: Partial<ParseRun>): void {
  for (const profile of ['python', 'python-ascii', 'orjson', 'javascript'] as const) {
    const digest = signedDigest(body, profile);
    expect(outcome(body, digest, true, limits), `signed as ${profile}: ${body.toString('latin1').slice(0, 200)}`).toEqual(
      outcome(body, digest, false, limits),
    );
  }
}

/** Text the guards leave to the exact path (non-finite numbers, long integers, surrogates, astral or high keys, index keys, NUL). */
const DOUBTFUL = /NaN|Infinity|\d{16}|\\u[dD][89a-fA-F]|\\u0000|__proto__|\\u005[fF]|"\d+"\s*:|[\u{e000}-\u{10ffff}]/u;

const enc = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('native first candidate vs python3 and the exact path', () => {
  const bodies = [...fixedCases().map((c) => c.body), ...fc.sample(generatedBodies, { seed: SEED, numRuns: RUNS }).map((g) => g.body)].map(
    (body, i) => ({ id: String(i), body }),
  );
  const oracle = new Map<string, OracleResult>();

  beforeAll(async () => {
    await streamPythonOracle(bodies, (r) => oracle.set(r.id, r));
  }, 120_000);

  it("answers only with python's json.dumps digest and toValue's payload, and answers most plain bodies", () => {
    let plain = 0;
    let plainAnswered = 0;
    for (const { id, body } of bodies) {
      const native = nativePythonCandidate(body, DEFAULT_MAX_DEPTH, BIG);
      const py = oracle.get(id)!;
      const isPlain = py.loadsError === null && py.isObject && py.outputs.python.kind === 'bytes' && !DOUBTFUL.test(body.toString('utf8'));
      if (isPlain) plain++;
      if (native === undefined) continue;
      if (isPlain) plainAnswered++;
      expect(py.loadsError, `python refuses body ${id}`).toBeNull();
      expect(py.isObject).toBe(true);
      const theirs = py.outputs.python;
      expect(theirs.kind, `python cannot write body ${id}`).toBe('bytes');
      expect(native.digest, `body ${id}: ${body.toString('latin1').slice(0, 300)}`).toBe(sha256Hex((theirs as { bytes: Buffer }).bytes));
      expect(native.payload).toEqual(toValue(parseBody(body, { maxBodyBytes: BIG })));
    }
    // Bodies with none of what the guards look for: refusing many of them would mean a guard is too wide.
    expect(plain).toBeGreaterThan(200);
    expect(plainAnswered).toBeGreaterThan(0.9 * plain);
  });

  it('verifies every generated body as the exact path does, for a signer of each profile', () => {
    for (const { body } of bodies.slice(0, 1200)) expectSameVerdicts(body);
  });
});

describe('native first candidate guards (each body written differently by the engine and by Python)', () => {
  const cases: Record<string, string> = {
    'integral float': '{"a": 1.0, "b": [2.0, -0.0, 0.0, 100.00], "c": 1.5}',
    'float below 1e-4': '{"a": 0.00001, "b": 1.5e-7, "c": 0.0001}',
    'float from 1e16': '{"a": 1e16, "b": 12345678901234567.0, "c": 1.5e300}',
    'exponent floats': '{"a": 1E2, "b": 2.5e-3, "c": 1e+0, "d": 0.5e1}',
    '17-digit floats': '{"a": 0.10000000000000001, "b": 0.99999999999999999999, "c": 1.00000000000000000001}',
    'big integer': '{"a": 12345678901234567890, "b": 9007199254740993}',
    'negative zero integer': '{"a": -0}',
    'float overflow': '{"a": 1e400}',
    'array-index keys': '{"10": 1, "9": 2, "a": 3, "01": 4, "4294967295": 5, "4294967294": 6}',
    'proto key': '{"__proto__": {"x": 1}, "a": 2}',
    'escaped proto key': '{"\\u005f_proto__": 1}',
    'astral vs private-use keys': '{"\\ud83d\\ude00": 1, "\\uffff": 2, "\\ue000": 3}',
    'raw astral vs private-use keys': '{"😀": 1, "\uffff": 2}',
    'digit-led astral vs fullwidth keys': '{"1😀": 1, "1\uff01": 2}',
    'lone surrogate value': '{"a": "\\ud800"}',
    'lone surrogate key': '{"\\udc00": 1, "b": 2}',
    'escaped pair value': '{"a": "\\ud83d\\ude00 ok"}',
    'nul string and a float': '{"a": "\\u0000x", "b": 1.0}',
    'nul string that looks like a marker': '{"a": "\\u00001.0", "b": 2.0}',
    'nul string in place of a float (duplicate key)': '{"b": 2.0, "b": "\\u00002.0"}',
    'literal backslash u0000': '{"a": "\\\\u0000", "b": 3.0}',
    'backslash before ud': '{"a": "\\\\ud800"}',
    'duplicate keys with floats': '{"a": 1.0, "a": 2, "b": 3.0, "b": 4.0}',
    'duplicate keys': '{"a": 1, "b": 2, "a": 3}',
    'NaN and Infinity': '{"a": NaN, "b": Infinity, "c": -Infinity}',
    'number in key position': '{1.0: 2}',
    'leading zero float': '{"a": 01.0}',
    'unclosed after float': '{"a": 1.0',
    'trailing data': '{"a": 1.0} x',
    'top-level array': '[1.0]',
    'control escapes': '{"a": "\\u0001\\u001f\\b\\f\\n\\r\\t\\"\\\\\\/", "\\u007f": "\u2028\u2029"}',
    'nested and empty': '{"z": {"y": [], "x": {}}, "a": [[1, 2.5], {"k": null, "j": true, "i": false}]}',
  };
  for (const [name, text] of Object.entries(cases)) {
    it(`${name}: the same verdict with and without the native candidate`, () => {
      expectSameVerdicts(enc(text));
    });
  }

  it('leaves to the exact path what it would write differently', () => {
    for (const name of [
      'float overflow',
      'big integer',
      'negative zero integer',
      'array-index keys',
      'proto key',
      'escaped proto key',
      'astral vs private-use keys',
      'raw astral vs private-use keys',
      'digit-led astral vs fullwidth keys',
      'lone surrogate value',
      'lone surrogate key',
      'nul string and a float',
      'nul string that looks like a marker',
      'nul string in place of a float (duplicate key)',
      'number in key position',
      'leading zero float',
      'NaN and Infinity',
    ]) {
      expect(nativePythonCandidate(enc(cases[name]!), DEFAULT_MAX_DEPTH, BIG), name).toBeUndefined();
    }
  });

  it("writes integral, tiny and huge floats as Python's repr, and the payload keeps the numbers", () => {
    const body = enc('{"b": [2.0, -0.0, 1e16, 0.00001, 1E2], "a": 1.0}');
    const native = nativePythonCandidate(body, DEFAULT_MAX_DEPTH, BIG)!;
    expect(native.digest).toBe(sha256Hex('{\n  "a": 1.0,\n  "b": [\n    2.0,\n    -0.0,\n    1e+16,\n    1e-05,\n    100.0\n  ]\n}'));
    expect(native.payload).toEqual({ b: [2, -0, 1e16, 0.00001, 100], a: 1 });
    expect(Object.keys(native.payload)).toEqual(['b', 'a']);
  });

  it('refuses nothing itself: bodies over the limits, deep or not UTF-8 reach the exact path and its errors', () => {
    const deep = `{"a": ${'['.repeat(40)}1.0${']'.repeat(40)}}`;
    expect(nativePythonCandidate(enc(deep), 20, BIG)).toBeUndefined();
    expectSameVerdicts(enc(deep), { maxDepth: 20 });
    // A canonical form whose bound exceeds the limit: refused by the parse, never accepted natively.
    const wide = enc(`{"a": [${Array.from({ length: 200 }, () => '[[1]]').join(',')}]}`);
    expect(outcome(wide, signedDigest(wide, 'python'), false, { maxCanonicalBytes: 4000 })).toEqual({
      code: 'ERR_CANONICAL_TOO_LARGE',
      cause: undefined,
    });
    expectSameVerdicts(wide, { maxCanonicalBytes: 4000 });
    const latin1 = Buffer.from('{"a": "caf\xe9", "b": 1.0}', 'latin1');
    expect(nativePythonCandidate(latin1, DEFAULT_MAX_DEPTH, BIG)).toBeUndefined();
    expectSameVerdicts(latin1);
    const surrogate = Buffer.concat([enc('{"a": "'), Buffer.from([0xed, 0xa0, 0x80]), enc('"}')]);
    expectSameVerdicts(surrogate);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), enc('{"a": 1.0, "é": "x"}')]);
    expect(nativePythonCandidate(bom, DEFAULT_MAX_DEPTH, BIG)).toBeDefined();
    expectSameVerdicts(bom);
  });

  it('reads a large body only while it is text-heavy, and leaves dense ones to the exact path', () => {
    const text = enc(`{"text": "${'caf\\u00e9 \\u6771\\u4eac '.repeat(4000)}", "n": 1.0}`);
    expect(nativePythonCandidate(text, DEFAULT_MAX_DEPTH, BIG)).toBeDefined();
    expectSameVerdicts(text);
    const dense = enc(`{"v": [${Array.from({ length: 6000 }, (_, i) => `${i}.5`).join(', ')}]}`);
    expect(dense.length).toBeGreaterThan(16 * 1024);
    expect(nativePythonCandidate(dense, DEFAULT_MAX_DEPTH, BIG)).toBeUndefined();
    expectSameVerdicts(dense);
  });

  it('is tried only when the python profile comes first', () => {
    const body = enc('{"a": 1}');
    const digest = sha256Hex(canonicalize(body, { profile: 'orjson' }));
    const r = verifyRecovered(body, recoveredFor(digest), ['orjson', 'python'], run(true), 'bigint');
    expect(r.profile).toBe('orjson');
  });
});

describe('nativeFirstPays (what the receiver and the verifier try first by default)', () => {
  const escaped = (n: number): Buffer => Buffer.from(`{"text": "${'caf\\u00e9 '.repeat(Math.ceil(n / 10))}"}`, 'latin1');
  const plain = (n: number): Buffer => Buffer.from(`{"text": "${'coffee ok '.repeat(Math.ceil(n / 10))}"}`, 'latin1');

  it('sends escape-heavy bodies of 8 KB and more to the native candidate, and everything smaller or unescaped to the exact path', () => {
    expect(nativeFirstPays(escaped(NATIVE_MIN_BYTES))).toBe(true);
    expect(nativeFirstPays(escaped(100_000))).toBe(true);
    expect(nativeFirstPays(escaped(1_000))).toBe(false);
    expect(nativeFirstPays(plain(100_000))).toBe(false);
    // A Uint8Array view into a larger buffer is read within its own bounds.
    const mixed = Buffer.concat([plain(NATIVE_MIN_BYTES * 2), escaped(NATIVE_MIN_BYTES)]);
    expect(nativeFirstPays(mixed)).toBe(true);
    expect(nativeFirstPays(new Uint8Array(mixed.buffer, mixed.byteOffset, NATIVE_MIN_BYTES * 2))).toBe(false);
  });

  it('gives the default the same verdict as the exact path and the forced native try, on bodies on both sides of the threshold', () => {
    for (const body of [escaped(1_000), escaped(NATIVE_MIN_BYTES), plain(NATIVE_MIN_BYTES)]) {
      const digest = sha256Hex(canonicalize(body, { profile: 'python' }));
      const { nativeFirst: _forced, ...auto } = run(true);
      const verdicts = [auto, run(true), run(false)].map((parseRun: ParseRun) => {
        const r = verifyRecovered(body, recoveredFor(digest), CANONICAL_PROFILES, parseRun, 'bigint');
        return [r.profile, r.digest, JSON.stringify(r.payload)];
      });
      expect(verdicts[0]).toEqual(verdicts[1]);
      expect(verdicts[0]).toEqual(verdicts[2]);
    }
  });
});
