import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKeyRing, createVerifier, type JobhookError } from '../src/index.js';
import { DEFAULT_HEADER_NAMES, signPayload, signPayloadAsync } from '../src/sign/index.js';
import { rawJson } from '../src/json/index.js';
import type { VerifierOptions, VerifyInput } from '../src/signature/verifier.js';
import { codeOf } from './helpers/error-code.js';

/** One verification with its own verifier (keys parsed on each call): what these tests need, not a public call. */
const verifySignature = (options: VerifierOptions & VerifyInput) => createVerifier(options).verify(options);

/** The repository's signature vectors and their keys (vectors/ at the repository root). */
const vectorsDir = resolve(import.meta.dirname, '../../../vectors');

let priv: KeyObject;
let pub: KeyObject;
let priv2: KeyObject;
let pub2: KeyObject;
beforeAll(() => {
  ({ privateKey: priv, publicKey: pub } = generateKeyPairSync('rsa', { modulusLength: 2048 }));
  ({ privateKey: priv2, publicKey: pub2 } = generateKeyPairSync('rsa', { modulusLength: 2048 }));
});

const event = {
  event: 'async_job_completed',
  job_id: '0b0c6f2e-4f7a-4c55-9a43-0c3f1d9e3c11',
  status: 'success',
  feature: 'ocr',
  subfeature: 'ocr_async',
  provider: 'amazon',
  model: null,
  created_at: new Date(Date.now() - 2500).toISOString().replace('Z', '000+00:00'),
  finished_at: new Date().toISOString().replace('Z', '000+00:00'),
  output: { raw_text: 'Grüße 😀' },
  user_parameters: { ratio: rawJson('1.0'), big: 123456789012345678901234567890n, tiny: 1e-7 },
};

describe('key ring', () => {
  it('reads PKCS#1 and SPKI PEM of the same key to the same id (SHA-256 of the SPKI DER)', () => {
    const spki = readFileSync(resolve(vectorsDir, 'keys/main.public.pem'), 'utf8');
    const pkcs1 = readFileSync(resolve(vectorsDir, 'keys/main.public.pkcs1.pem'), 'utf8');
    const a = createKeyRing(spki).keys[0]!;
    const b = createKeyRing(Buffer.from(pkcs1)).keys[0]!;
    const der = createPublicKey(spki).export({ type: 'spki', format: 'der' });
    expect(a.id).toBe(createHash('sha256').update(der).digest('hex'));
    expect(b.id).toBe(a.id);
    expect(createKeyRing([spki, pkcs1]).keys).toHaveLength(1); // the same key twice is kept once
  });
  it('keeps several keys in order, for rotation', () => {
    const ring = createKeyRing([pub, pub2]);
    expect(ring.keys.map((k) => k.bits)).toEqual([2048, 2048]);
    expect(ring.find(ring.keys[1]!.id)?.key).toBe(pub2);
  });
  it('refuses non-RSA keys, short keys, garbage and empty lists at construction', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(codeOf(() => createKeyRing(ec))).toBe('ERR_KEY_INVALID');
    expect(() => createKeyRing(short)).toThrow(/1024 bits; at least 2048/);
    expect(codeOf(() => createKeyRing('not a pem'))).toBe('ERR_KEY_INVALID');
    expect(codeOf(() => createKeyRing([]))).toBe('ERR_KEY_INVALID');
    expect(() => createKeyRing([pub, 'junk'])).toThrow(/key #2/);
  });
});

describe('signPayload → createVerifier round trip', () => {
  it('verifies in every profile and body style, reporting profile and key', () => {
    const verifier = createVerifier({ publicKeys: [pub2, pub] });
    for (const profile of ['python', 'python-ascii', 'orjson'] as const) {
      for (const bodyStyle of ['python', 'canonical', 'compact'] as const) {
        // orjson cannot write integers beyond 64 bits, so its signer could not have sent `big`
        const big = profile === 'orjson' ? 2n ** 64n - 1n : 123456789012345678901234567890n;
        const payload = { ...event, user_parameters: { ...event.user_parameters, big } };
        const signed = signPayload(payload, priv, { profile, bodyStyle });
        const result = verifier.verify({ body: signed.body, signature: signed.signature });
        expect(result.keyId).toBe(verifier.keyRing.keys[1]!.id);
        expect(result.digest).toBe(signed.digest);
        expect(result.payload['job_id']).toBe(event.job_id);
        expect(result.payload['user_parameters']).toEqual({ ratio: 1, big, tiny: 1e-7 });
        // python-ascii/orjson bytes can coincide with python's; then python (tried first) is reported
        if (profile === 'python') expect(result.profile).toBe('python');
      }
    }
  });
  it('refuses to sign in a profile that cannot write the payload', () => {
    expect(codeOf(() => signPayload(event, priv, { profile: 'orjson' }))).toBe('ERR_CANONICAL_UNREPRESENTABLE');
  });
  it('keeps float forms exact in what it signs', () => {
    const signed = signPayload(event, priv, { bodyStyle: 'canonical' });
    const text = signed.canonical.toString('utf8');
    expect(text).toContain('"ratio": 1.0');
    expect(text).toContain('"tiny": 1e-07');
    expect(text).toContain('"big": 123456789012345678901234567890');
    expect(signed.body.equals(signed.canonical)).toBe(true);
  });
  it('signPayloadAsync gives the same bytes and signature as signPayload, and the same errors', async () => {
    for (const bodyStyle of ['python', 'canonical', 'compact'] as const) {
      const sync = signPayload(event, priv, { bodyStyle });
      const async_ = await signPayloadAsync(event, priv, { bodyStyle });
      expect(async_.body.equals(sync.body)).toBe(true);
      expect(async_.signature).toBe(sync.signature); // PKCS#1 v1.5 is deterministic
      expect(async_.headers).toEqual(sync.headers);
    }
    await expect(signPayloadAsync(event, pub)).rejects.toMatchObject({ code: 'ERR_KEY_INVALID' });
  });
  it('sends the python body style as json.dumps defaults would', () => {
    const signed = signPayload({ b: 'é', a: [1, 2.5] }, priv);
    expect(signed.body.toString()).toBe('{"b": "\\u00e9", "a": [1, 2.5]}');
  });
  it('sets the spec headers', () => {
    const signed = signPayload(event, priv);
    expect(signed.headers).toEqual({
      'Content-Type': 'application/json',
      [DEFAULT_HEADER_NAMES.webhook]: 'true',
      [DEFAULT_HEADER_NAMES.signature]: signed.signature,
      [DEFAULT_HEADER_NAMES.hashAlgorithm]: 'SHA256',
    });
    expect(signed.signature).toMatch(/^[0-9a-f]{512}$/);
  });
  it('accepts the signature in upper case and with surrounding whitespace', () => {
    const signed = signPayload(event, priv);
    const result = verifySignature({ publicKeys: pub, body: signed.body, signature: ` ${signed.signature.toUpperCase()}\t` });
    expect(result.profile).toBe('python');
  });
  it('limits the profiles tried when asked', () => {
    const signed = signPayload({ a: 'é' }, priv, { profile: 'python-ascii' });
    expect(verifySignature({ publicKeys: pub, body: signed.body, signature: signed.signature }).profile).toBe('python-ascii');
    expect(codeOf(() => verifySignature({ publicKeys: pub, profiles: ['python'], body: signed.body, signature: signed.signature }))).toBe(
      'ERR_SIGNATURE_INVALID',
    );
  });
});

describe('verification errors', () => {
  const signed = () => signPayload(event, priv);
  it.each([
    ['missing signature', undefined, 'ERR_SIGNATURE_MISSING'],
    ['empty signature', '', 'ERR_SIGNATURE_MISSING'],
    ['odd-length hex', 'abc', 'ERR_SIGNATURE_MALFORMED'],
    ['not hex', 'zz'.repeat(256), 'ERR_SIGNATURE_MALFORMED'],
    ['absurdly long', 'ab'.repeat(5000), 'ERR_SIGNATURE_MALFORMED'],
    ['two signature headers', ['ab', 'cd'], 'ERR_SIGNATURE_MALFORMED'],
    // The receiver's rule, for every caller (one decoder): hex of a length no configured key makes is malformed, no RSA operation.
    ['wrong length', 'ab'.repeat(10), 'ERR_SIGNATURE_MALFORMED'],
  ] as const)('%s → %s', (_name, signature, code) => {
    expect(codeOf(() => verifySignature({ publicKeys: pub, body: signed().body, signature }))).toBe(code);
  });
  it('a tampered body or another key → ERR_SIGNATURE_INVALID (401)', () => {
    const s = signed();
    const tampered = Buffer.from(s.body.toString().replace('amazon', 'google'));
    expect(codeOf(() => verifySignature({ publicKeys: pub, body: tampered, signature: s.signature }))).toBe('ERR_SIGNATURE_INVALID');
    const other = signPayload(event, priv2);
    const err = (() => {
      try {
        verifySignature({ publicKeys: pub, body: other.body, signature: other.signature });
      } catch (e) {
        return e as JobhookError;
      }
      return undefined;
    })();
    expect(err?.code).toBe('ERR_SIGNATURE_INVALID');
    expect(err?.status).toBe(401);
    expect(err?.toJSON()).toEqual({ error: { code: 'ERR_SIGNATURE_INVALID', message: err?.message } });
  });
  it('a signature no key decodes is refused before the body is read; a bad body under a decoding signature is reported as such', () => {
    const decoding = signPayload(event, priv).signature; // made by the key, over another body
    const madeUp = 'ab'.repeat(decoding.length / 2); // as long as the key's signatures, made by no key
    expect(codeOf(() => verifySignature({ publicKeys: pub, body: '{"a": ', signature: madeUp }))).toBe('ERR_SIGNATURE_INVALID');
    expect(codeOf(() => verifySignature({ publicKeys: pub, body: '{"a": ', signature: decoding }))).toBe('ERR_BODY_MALFORMED');
    expect(codeOf(() => verifySignature({ publicKeys: pub, body: '[1]', signature: decoding }))).toBe('ERR_BODY_NOT_OBJECT');
  });
  it('refuses bad options at construction', () => {
    // @ts-expect-error keys are required
    expect(codeOf(() => createVerifier({}))).toBe('ERR_OPTION_INVALID');
    // `keys`, the old name of `publicKeys`, is gone: the error names the new one.
    expect(() => createVerifier({ keys: pub } as never)).toThrow(/`publicKeys` is required .*`keys` was its old name/);
    expect(() => createVerifier({} as never)).toThrow(/`publicKeys` is required/);
    // @ts-expect-error profiles must be known
    expect(() => createVerifier({ publicKeys: pub, profiles: ['python', 'yaml'] })).toThrow(/unknown profile "yaml"/);
    expect(codeOf(() => createVerifier({ publicKeys: pub, profiles: [] }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(() => createVerifier({ publicKeys: pub, profiles: ['python', 'python'] }))).toBe('ERR_OPTION_INVALID');
  });
  it('refuses a private key given as the public key, as a PEM or a KeyObject, and says why', () => {
    const pem = priv.export({ type: 'pkcs8', format: 'pem' }).toString();
    const pkcs1 = priv.export({ type: 'pkcs1', format: 'pem' }).toString();
    for (const input of [pem, pkcs1, Buffer.from(pem), priv]) {
      expect(() => createKeyRing(input)).toThrow(/is a private key; give the receiver only the service's public key/);
    }
    expect(() => createVerifier({ publicKeys: [pub, priv] })).toThrow(/key #2 is a private key/);
  });
  it('names a file path passed where the PEM contents are expected', () => {
    for (const path of ['service-public.pem', './keys/public.pem', '/etc/jobhook/service.pem', 'C:\\keys\\service.pem']) {
      expect(() => createKeyRing(path)).toThrow(/looks like a file path; pass the file's contents \(readFileSync\(/);
    }
    expect(() => createKeyRing('not a key at all')).toThrow(/not a PEM document \(no -----BEGIN line\)/);
    expect(() => signPayload(event, 'keys/private.pem')).toThrow(/looks like a file path/);
  });
  it("names a public key given to signing, without OpenSSL's words", () => {
    const spki = pub.export({ type: 'spki', format: 'pem' }).toString();
    for (const input of [spki, pub.export({ type: 'pkcs1', format: 'pem' }).toString(), pub]) {
      let message = '';
      try {
        signPayload(event, input);
      } catch (err) {
        message = (err as JobhookError).message;
      }
      expect(message).toMatch(/^this is a public key; signing needs the private key/);
      expect(message).not.toMatch(/DECODER|routines/);
    }
  });
  it('refuses a short or non-RSA signing key', () => {
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    expect(codeOf(() => signPayload(event, short))).toBe('ERR_KEY_INVALID');
    expect(codeOf(() => signPayload(event, pub))).toBe('ERR_KEY_INVALID');
  });
});
