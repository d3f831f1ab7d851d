/**
 * The diagnosis test cases, built from real signed deliveries: every variant of every cause of
 * `breakDelivery`, in two statuses and three body layouts, plus intact deliveries (every profile and
 * layout, a rotated key, and the changes the canonical form ignores). Shared by core's diagnosis
 * tests and the CLI's `jobhook doctor --batch` test.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { CanonicalProfile } from '../../src/index.js';
import type { BodyStyle } from '../../src/sign/index.js';
import type { DiagnosisCause } from '../../src/diagnosis/index.js';
import { signPayload } from '../../src/sign/index.js';
import { BREAK_VARIANTS, breakDelivery, buildTestEvent, createTestKeyPair, type BreakCause } from '../../src/testing/index.js';

/** One delivery and the cause the diagnosis must name. */
export interface DiagnosisCase {
  id: string;
  expected: DiagnosisCause;
  variant: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** The keys of the cases: the ring holds `main` and `rotated` (PEM), deliveries are signed by either. */
export interface CaseKeys {
  main: KeyObject;
  rotated: KeyObject;
  publicKeyPems: string[];
}

let keys: CaseKeys | undefined;

/** The cases' key ring, made once per process. */
export function caseKeys(): CaseKeys {
  if (keys === undefined) {
    const main = createTestKeyPair();
    const rotated = generateKeyPairSync('rsa', { modulusLength: 2048 });
    keys = {
      main: main.privateKey,
      rotated: rotated.privateKey,
      publicKeyPems: [main.publicKeyPem, rotated.publicKey.export({ type: 'spki', format: 'pem' }).toString()],
    };
  }
  return keys;
}

const STYLES: readonly BodyStyle[] = ['python', 'canonical', 'compact'];
const STATUSES = ['success', 'fail'] as const;
const PROFILES: readonly CanonicalProfile[] = ['python', 'python-ascii', 'orjson', 'javascript'];

/** An event with non-ASCII text, so escaping and re-encoding have something to change (no floats: the harmless changes go through JSON.parse). */
function richEvent(status: 'success' | 'fail'): object {
  return buildTestEvent({ status, user_parameters: { note: 'Café “crème”', order: 12 } });
}

/** Every broken and intact case (about 360). */
export function buildDiagnosisCases(): DiagnosisCase[] {
  const { main, rotated } = caseKeys();
  const cases: DiagnosisCase[] = [];
  for (const [cause, variants] of Object.entries(BREAK_VARIANTS) as [BreakCause, readonly string[]][]) {
    variants.forEach((_, variant) => {
      for (const status of STATUSES) {
        for (const bodyStyle of STYLES) {
          const broken = breakDelivery(buildTestEvent({ status }), cause, { privateKey: main, variant, bodyStyle });
          cases.push({
            id: `${cause}/${broken.variant}/${status}/${bodyStyle}`,
            expected: cause,
            variant: broken.variant,
            headers: broken.headers,
            body: broken.body,
          });
        }
      }
    });
  }
  for (const status of STATUSES) {
    for (const profile of PROFILES) {
      for (const bodyStyle of STYLES) {
        if (profile === 'javascript' && bodyStyle !== 'canonical') continue; // JS-profile bodies: see signPayload's read-back rule
        const { body, headers } = signPayload(richEvent(status), main, { profile, bodyStyle });
        cases.push({ id: `verified/${profile}/${status}/${bodyStyle}`, expected: 'verified', variant: profile, headers, body });
      }
    }
    const rotatedDelivery = signPayload(richEvent(status), rotated);
    cases.push({ id: `verified/rotated-key/${status}`, expected: 'verified', variant: 'rotated-key', ...rotatedDelivery });
    // What the canonical form ignores: layout, key order, \u escapes, a lower-case signature.
    const intact = signPayload(richEvent(status), main, { bodyStyle: 'compact' });
    const value = JSON.parse(intact.body.toString('utf8')) as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(value).reverse());
    const harmless: Record<string, Buffer> = {
      'pretty-printed': Buffer.from(JSON.stringify(value, null, 4)),
      'keys-reordered': Buffer.from(JSON.stringify(reordered)),
      'ascii-escaped': Buffer.from(
        JSON.stringify(value).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      ),
      'crlf-newlines': Buffer.from(JSON.stringify(value, null, 2).replace(/\n/g, '\r\n')),
    };
    for (const [variant, body] of Object.entries(harmless)) {
      cases.push({ id: `verified/${variant}/${status}`, expected: 'verified', variant, headers: intact.headers, body });
    }
    const upper = { ...intact.headers, 'X-Service-Signature': intact.signature.toUpperCase(), 'X-Service-Hash-Algorithm': 'sha256' };
    cases.push({
      id: `verified/upper-case-signature/${status}`,
      expected: 'verified',
      variant: 'upper-case-signature',
      headers: upper,
      body: intact.body,
    });
  }
  return cases;
}
