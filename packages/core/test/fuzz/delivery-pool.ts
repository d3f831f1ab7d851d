/**
 * Valid signed deliveries, signed once before the fuzz runs (RSA signing costs about 1 ms; a
 * property that signed per case would spend its time there), and the oracle the properties judge
 * the receiver's answers by: the canonical form, computed by core's `canonicalize`.
 */
import type { KeyObject } from 'node:crypto';
import { validateEvent, type CanonicalProfile, type JsonObject, type JsonValue } from '../../src/index.js';
import type { BodyStyle } from '../../src/sign/index.js';
import { parseBody, rawJson, toValue } from '../../src/json/index.js';
import { CANONICAL_PROFILES, canonicalize } from '../../src/canonical/index.js';
import { signTestEvent, type TestEventOverrides } from '../../src/testing/index.js';

/** One valid delivery: what the signer sent, and what its signature covers. */
export interface PoolEntry {
  label: string;
  jobId: string;
  body: Buffer;
  signature: string;
  /** The canonical bytes that were hashed and signed. */
  canonical: Buffer;
  /** The payload the signature covers: the signed canonical bytes, parsed. */
  signedValue: JsonValue;
}

interface Template {
  label: string;
  overrides: TestEventOverrides;
  profile: CanonicalProfile;
  bodyStyle: BodyStyle;
}

const UNICODE_TEXT = 'café 日本語 😀 \u2028 \u007f "quoted" back\\slash /slash\n\t\u0001';

/** Payload shapes that stress canonicalization: exact floats, big integers, Unicode, key order, nulls. */
const TEMPLATES: readonly Template[] = [
  { label: 'success', overrides: {}, profile: 'python', bodyStyle: 'python' },
  { label: 'fail', overrides: { status: 'fail' }, profile: 'python', bodyStyle: 'compact' },
  {
    label: 'floats',
    overrides: {
      user_parameters: {
        one: rawJson('1.0'),
        hundred: rawJson('100.0'),
        big: rawJson('1e+16'),
        negzero: rawJson('-0.0'),
        tenth: rawJson('0.1'),
        small: rawJson('1e-07'),
        huge: rawJson('1.5e+300'),
        denormal: rawJson('5e-324'),
        int: 100,
      },
    },
    profile: 'python',
    bodyStyle: 'python',
  },
  {
    label: 'big integers',
    overrides: {
      user_parameters: {
        maxsafe: 9007199254740991,
        p53: 2n ** 53n,
        p53plus1: 2n ** 53n + 1n,
        e20: 10n ** 20n,
        p64: 2n ** 64n,
        huge: 12345678901234567890123456789n,
        neg: -1,
        zero: 0,
      },
    },
    profile: 'python',
    bodyStyle: 'canonical',
  },
  { label: 'unicode', overrides: { output: { raw_text: UNICODE_TEXT, pages: 2 } }, profile: 'python', bodyStyle: 'python' },
  { label: 'unicode, raw body', overrides: { output: { raw_text: UNICODE_TEXT, pages: 2 } }, profile: 'python', bodyStyle: 'canonical' },
  {
    label: 'key order',
    overrides: {
      user_parameters: { é: 1, z: 2, Z: 3, '10': 4, '9': 5, '\ud83d\ude00': 6, '\uffff': 7, '': 8, a: { b: [], c: {} } },
    },
    profile: 'python',
    bodyStyle: 'python',
  },
  {
    label: '__proto__ key, signed',
    overrides: { user_parameters: rawJson('{"__proto__":{"x":1},"y":2}') },
    profile: 'python',
    bodyStyle: 'python',
  },
  {
    label: 'nulls',
    overrides: { output: { a: null, b: [null, 1], c: { d: null } }, original_response: null },
    profile: 'python',
    bodyStyle: 'python',
  },
  {
    label: 'nested',
    overrides: { original_response: JSON.parse(`${'['.repeat(20)}{"deep":true}${']'.repeat(20)}`) as unknown },
    profile: 'python',
    bodyStyle: 'compact',
  },
  {
    label: 'fail with extras',
    overrides: { status: 'fail', error: { message: 'boom', error_code: 'provider_error' }, cost: '0.12' },
    profile: 'python',
    bodyStyle: 'canonical',
  },
  {
    label: 'javascript profile',
    overrides: { output: { score: rawJson('1.5'), pages: 3, text: 'é' } },
    profile: 'javascript',
    bodyStyle: 'python',
  },
  {
    label: 'orjson profile',
    overrides: { output: { score: rawJson('1.0'), big: rawJson('1e+16'), pages: 3 } },
    profile: 'orjson',
    bodyStyle: 'python',
  },
  {
    label: 'python-ascii profile',
    overrides: { output: { raw_text: UNICODE_TEXT } },
    profile: 'python-ascii',
    bodyStyle: 'compact',
  },
];

/**
 * Signs every template `copies` times, each with its own `job_id`: a delivery's first acceptance
 * runs the handler, later ones are duplicates, so more copies exercise more first runs.
 */
export function buildDeliveryPool(privateKey: KeyObject, copies = 4): PoolEntry[] {
  const pool: PoolEntry[] = [];
  for (let copy = 0; copy < copies; copy++) {
    for (const t of TEMPLATES) {
      const signed = signTestEvent(t.overrides, { privateKey, profile: t.profile, bodyStyle: t.bodyStyle });
      pool.push({
        label: `${t.label} (${t.profile}, ${t.bodyStyle} body)`,
        jobId: signed.event.job_id,
        body: signed.body,
        signature: signed.signature,
        canonical: signed.canonical,
        signedValue: toValue(parseBody(signed.canonical), { bigIntegers: 'string' }),
      });
    }
  }
  return pool;
}

/** The profiles under which `body`'s canonical form is exactly `canonical` (empty: not the signed payload). */
export function matchingProfiles(body: Uint8Array, canonical: Buffer): CanonicalProfile[] {
  return CANONICAL_PROFILES.filter((profile) => {
    try {
      return canonicalize(body, { profile }).equals(canonical);
    } catch {
      return false; // not JSON, too deep, or not writable in that profile
    }
  });
}

/** True when `body` parses and its value has the event shape the receiver requires. */
export function eventShapeOk(body: Uint8Array): boolean {
  try {
    validateEvent(toValue(parseBody(body)) as JsonObject);
    return true;
  } catch {
    return false;
  }
}

/** True when `body` parses as a JSON object within the receiver's default limits. */
export function parsesAsObject(body: Uint8Array): boolean {
  try {
    parseBody(body);
    return true;
  } catch {
    return false;
  }
}

/**
 * Deep equality of two parsed JSON values as a handler sees them: same own keys (`__proto__`
 * included), numbers by `===` (so `-0` equals `0`, as in JSON), NaN equal to NaN, bigints by value.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || (Number.isNaN(a) && Number.isNaN(b));
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, n) => sameJson(v, b[n]));
  }
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  if (ka.length !== kb.length || ka.some((k, n) => k !== kb[n])) return false;
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  return ka.every((k) => sameJson(Object.getOwnPropertyDescriptor(oa, k)?.value, Object.getOwnPropertyDescriptor(ob, k)?.value));
}
