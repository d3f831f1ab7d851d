/**
 * The repository's signature vectors (vectors/ at the repository root, made by vectors/generate.py):
 * every case verified with the `main` public key in both PEM forms, classified as valid / invalid /
 * malformed. A missing file fails, never skips: the vectors are committed with the repository.
 */
import { createHash, createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JobhookError, createVerifier, type Verifier, type VerifyResult } from '../src/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { allowed, loadVectors, type Outcome, type VectorCase } from './helpers/signature-vectors.js';

const loaded = loadVectors();

interface Classified {
  outcome: Outcome;
  result: VerifyResult | undefined;
  error: JobhookError | undefined;
}

function classify(verifier: Verifier, c: VectorCase): Classified {
  try {
    const result = verifier.verify({ body: c.body, signature: c.signature });
    return { outcome: 'valid', result, error: undefined };
  } catch (err) {
    if (!(err instanceof JobhookError)) throw err; // anything else is a bug, never a verdict
    return { outcome: err.code.startsWith('ERR_SIGNATURE') ? 'invalid' : 'malformed', result: undefined, error: err };
  }
}

function spkiKeyId(pem: string): string {
  const der = createPublicKey(pem).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

describe('signature vectors (vectors/vectors.jsonl)', () => {
  it('are present and non-empty', () => {
    if (loaded.error !== null) throw new Error(loaded.error);
    expect(loaded.cases.length).toBeGreaterThan(0);
    expect(loaded.cases.filter((c) => c.expect === 'valid').length).toBeGreaterThan(0);
    expect(new Set(loaded.cases.map((c) => c.id)).size).toBe(loaded.cases.length);
  });

  const keys = loaded.keys;
  // Missing or broken vectors: the test above fails with the reason; nothing else to run.
  if (keys === null) return;
  const mainKeyId = spkiKeyId(keys.mainSpki);

  describe.each([
    { form: 'SPKI (main.public.pem)', pem: keys.mainSpki },
    { form: 'PKCS#1 (main.public.pkcs1.pem)', pem: keys.mainPkcs1 },
  ])('main key as $form', ({ pem }) => {
    const verifier = createVerifier({ publicKeys: pem });

    it('has the SPKI-DER SHA-256 key id', () => {
      expect(verifier.keyRing.keys.map((k) => k.id)).toEqual([mainKeyId]);
    });

    it.each(loaded.cases)('$id [$category, $mode] is $expect', (c) => {
      const got = classify(verifier, c);
      const detail = got.error === undefined ? '' : ` (${got.error.code}: ${got.error.message})`;
      expect(allowed(c.expect), `case ${c.id}: got ${got.outcome}${detail}`).toContain(got.outcome);
      if (got.result === undefined) return;
      const r = got.result;
      expect(r.keyId, `case ${c.id}: keyId`).toBe(mainKeyId);
      // An ASCII-only payload has the same bytes in both Python profiles, and python is tried first.
      const profiles = c.mode === 'utf8' ? ['python'] : ['python', 'python-ascii'];
      expect(profiles, `case ${c.id}: reported profile ${r.profile}`).toContain(r.profile);
      expect(r.digest, `case ${c.id}: digest`).toBe(createHash('sha256').update(r.canonical).digest('hex'));
      expect(r.canonical.equals(canonicalize(c.body, { profile: r.profile })), `case ${c.id}: canonical bytes`).toBe(true);
      expect(typeof r.payload, `case ${c.id}: payload`).toBe('object');
    });
  });

  it.each([
    { form: 'SPKI', pem: keys.otherSpki },
    { form: 'PKCS#1', pem: keys.otherPkcs1 },
  ])('the other key ($form) verifies none of the valid cases', ({ pem }) => {
    const verifier = createVerifier({ publicKeys: pem });
    expect(verifier.keyRing.keys[0]?.id).not.toBe(mainKeyId);
    const accepted = loaded.cases
      .filter((c) => c.expect === 'valid')
      .filter((c) => classify(verifier, c).outcome === 'valid')
      .map((c) => c.id);
    expect(accepted).toEqual([]);
  });
});
