/**
 * diagnoseDelivery over real signed deliveries broken in every way breakDelivery knows (each cause
 * in several variants, two statuses, three body layouts) and intact ones: the right cause for each,
 * an intact delivery never diagnosed as broken, a broken one never as verified, and the same
 * verdict as the verifier.
 */
import { describe, expect, it } from 'vitest';
import { createKeyRing, createVerifier, JobhookError } from '../../src/index.js';
import { signPayload } from '../../src/sign/index.js';
import { DIAGNOSIS_CAUSES, diagnoseDelivery, isDiagnosisCause, type Diagnosis } from '../../src/diagnosis/index.js';
import { breakDelivery, buildTestEvent, createTestKeyPair } from '../../src/testing/index.js';
import { buildDiagnosisCases, caseKeys } from '../helpers/broken-deliveries.js';

const cases = buildDiagnosisCases();
const { publicKeyPems } = caseKeys();
const ring = createKeyRing(publicKeyPems);
const started = performance.now();
const diagnosed = cases.map((c) => ({
  c,
  d: diagnoseDelivery({ method: 'POST', headers: c.headers, body: c.body }, { publicKeys: ring }),
}));

// Printed for the record, not asserted: wall-clock figures vary with the machine.
console.log(`diagnoseDelivery: ${cases.length} cases in ${Math.round(performance.now() - started)} ms`);

describe('diagnoseDelivery on generated deliveries', () => {
  it('has at least 15 cases of every cause, 200 broken in all', () => {
    const counts = Object.fromEntries(DIAGNOSIS_CAUSES.map((cause) => [cause, cases.filter((c) => c.expected === cause).length]));
    for (const cause of DIAGNOSIS_CAUSES) expect(counts[cause], cause).toBeGreaterThanOrEqual(15);
    expect(cases.filter((c) => c.expected !== 'verified').length).toBeGreaterThanOrEqual(200);
  });

  it('names the right cause for every case', () => {
    const wrong = diagnosed.filter(({ c, d }) => d.cause !== c.expected).map(({ c, d }) => `${c.id} -> ${d.cause}: ${d.message}`);
    expect(wrong).toEqual([]);
  });

  it('never diagnoses an intact delivery as broken, nor a broken one as verified', () => {
    for (const { c, d } of diagnosed) {
      expect(d.verified, c.id).toBe(c.expected === 'verified');
      expect(d.verified, c.id).toBe(d.cause === 'verified');
    }
  });

  it('agrees with the verifier: verified exactly when verify() returns', () => {
    const verifier = createVerifier({ publicKeys: ring });
    for (const { c, d } of diagnosed) {
      let verifies: boolean;
      try {
        verifier.verify({ body: c.body, signature: c.headers['X-Service-Signature'] });
        verifies = true;
      } catch (err) {
        expect(err).toBeInstanceOf(JobhookError);
        verifies = false;
      }
      // The verifier reads the signature header only; the hash-algorithm header is the receiver's check.
      const hashOk = (c.headers['X-Service-Hash-Algorithm'] ?? 'SHA256').toUpperCase() === 'SHA256';
      expect(d.verified, c.id).toBe(verifies && hashOk);
    }
  });

  it('gives every answer a message, the fix of its cause, and a known cause', () => {
    const fixes = new Map<string, Set<string>>();
    for (const { d } of diagnosed) {
      expect(isDiagnosisCause(d.cause)).toBe(true);
      expect(d.message.length).toBeGreaterThan(10);
      fixes.set(d.cause, (fixes.get(d.cause) ?? new Set()).add(d.fix));
    }
    for (const set of fixes.values()) expect(set.size).toBe(1);
  });
});

describe('what each diagnosis says', () => {
  const of = (prefix: string): Diagnosis[] => diagnosed.filter(({ c }) => c.id.startsWith(prefix)).map(({ d }) => d);

  it('verified: the profile and the key that signed', () => {
    const [d] = of('verified/python/success/python');
    expect(d).toMatchObject({ verified: true, profile: 'python', keyId: ring.keys[0]!.id });
    expect(of('verified/rotated-key')[0]).toMatchObject({ keyId: ring.keys[1]!.id });
    expect(of('verified/python-ascii/fail/canonical')[0]!.profile).toBe('python-ascii');
  });

  it('unknown-key: lists the key ids tried', () => {
    for (const d of of('unknown-key/')) {
      expect(d.detail?.['keyIdsTried']).toEqual(ring.keys.map((k) => k.id));
      expect(d.keyId).toBeUndefined();
    }
    expect(of('unknown-key/other-size-key/')[0]!.detail?.['signatureBits']).toBe(3072);
  });

  it('signature-elsewhere: names the header that holds it', () => {
    const headers = new Set(of('signature-elsewhere/').map((d) => d.detail?.['header']));
    expect([...headers].sort()).toEqual([
      'signature',
      'x-hub-signature-256',
      'x-original-x-service-signature',
      'x-signature',
      'x-webhook-signature',
    ]);
    // Read from there, each verifies: the body was never the problem.
    for (const d of of('signature-elsewhere/')) {
      expect(d.detail?.['onceFixed']).toBe('verified');
      expect(d.message).toMatch(/read from there, the signature verifies$/);
    }
  });

  it('signature-malformed: the shape of each variant', () => {
    const shapes = Object.fromEntries(
      diagnosed.filter(({ c }) => c.expected === 'signature-malformed').map(({ c, d }) => [c.variant, d.detail?.['shape']]),
    );
    expect(shapes).toEqual({
      'sha256-prefix': 'prefixed',
      base64: 'base64',
      truncated: 'truncated',
      'odd-length': 'odd-length',
      colons: 'separators',
      spaces: 'separators',
      digest: 'digest',
      quoted: 'quoted',
      'not-hex': 'not-hex',
    });
    // A signature in another dress is taken out of it and tried: these verify once sent bare.
    const onceFixed = Object.fromEntries(
      diagnosed.filter(({ c }) => c.expected === 'signature-malformed').map(({ c, d }) => [c.variant, d.detail?.['onceFixed']]),
    );
    expect(onceFixed).toEqual({
      'sha256-prefix': 'verified',
      base64: 'verified',
      truncated: undefined,
      'odd-length': undefined,
      colons: 'verified',
      spaces: 'verified',
      digest: undefined,
      quoted: 'verified',
      'not-hex': undefined,
    });
  });

  it('a renamed header over a re-serialized body: both said', () => {
    const keys = createTestKeyPair();
    const broken = breakDelivery(buildTestEvent(), 'body-reserialized', { privateKey: keys.privateKey });
    const { 'X-Service-Signature': signature, ...rest } = broken.headers;
    const d = diagnoseDelivery({ headers: { ...rest, 'X-Signature': signature! }, body: broken.body }, { publicKeys: keys.publicKeyPem });
    expect(d).toMatchObject({
      cause: 'signature-elsewhere',
      keyId: expect.any(String),
      detail: { header: 'x-signature', onceFixed: 'body-reserialized' },
    });
    expect(d.message).toMatch(/read from there, the delivery still fails: body-reserialized$/);
  });

  it('body-malformed: the kind of body', () => {
    const kinds = Object.fromEntries(
      diagnosed.filter(({ c }) => c.expected === 'body-malformed').map(({ c, d }) => [c.variant, d.detail?.['kind']]),
    );
    expect(kinds).toEqual({
      truncated: 'truncated',
      'html-error-page': 'html',
      empty: 'empty',
      'not-utf8': 'not-utf8',
      'trailing-garbage': 'not-json',
      'form-encoded': 'form-encoded',
      'top-level-array': 'not-object',
    });
  });

  it('body-transcoded: the change undone, with the key and profile it verifies under', () => {
    const changes = Object.fromEntries(
      diagnosed.filter(({ c }) => c.expected === 'body-transcoded').map(({ c, d }) => [c.variant, d.detail?.['change']]),
    );
    expect(changes).toEqual({
      'latin1-mojibake': 'utf8-read-as-latin1',
      'cp1252-mojibake': 'utf8-read-as-cp1252',
      'double-mojibake': 'utf8-read-as-latin1-twice',
      nfd: 'unicode-normalized-from-nfc',
      nfc: 'unicode-normalized-from-nfd',
      'reencoded-latin1': 'reencoded-as-latin1',
      'reencoded-cp1252': 'reencoded-as-cp1252',
      // Composed: the first change hidden behind a re-dump's \u escapes, or two changes in a row.
      'nfd-then-redumped': 'unicode-normalized-from-nfc',
      'mojibake-then-redumped': 'utf8-read-as-latin1',
      'mojibake-then-nfd': 'utf8-read-as-latin1+unicode-normalized-from-nfc',
    });
    for (const d of of('body-transcoded/')) expect(d).toMatchObject({ keyId: ring.keys[0]!.id, profile: 'python' });
    expect(of('body-transcoded/nfd-then-redumped/')[0]!.message).toContain('and the JSON was re-serialized too');
    expect(of('body-transcoded/mojibake-then-nfd/')[0]!.message).toMatch(/read as Latin-1 .*, then the text was Unicode-normalized/);
  });

  it('body-reserialized: an indented JSON.stringify (a queue or a log that stored the parsed body) named with its layout', () => {
    expect(of('body-reserialized/stringify-indent-2/')[0]!.detail?.['layout']).toBe('JSON.stringify(value, null, 2)');
    expect(of('body-reserialized/stringify-tab-newline/')[0]!.detail?.['layout']).toBe("JSON.stringify(value, null, '\\t')");
    expect(of('body-reserialized/float-1.0/')[0]!.detail?.['layout']).toBe('JSON.stringify(value)');
  });

  it("unknown-key: the throwaway key has the signer's size, so a 3072-bit receiver sees unknown-key, not a malformed signature", () => {
    const signer = createTestKeyPair(3072);
    const broken = breakDelivery(buildTestEvent(), 'unknown-key', { privateKey: signer.privateKey });
    const d = diagnoseDelivery({ headers: broken.headers, body: broken.body }, { publicKeys: signer.publicKeyPem });
    expect(d.cause).toBe('unknown-key');
    expect(broken.headers['X-Service-Signature']).toHaveLength(768);
  });

  it('body-reserialized: the numbers JavaScript wrote differently, and how to mount the route', () => {
    const [float] = of('body-reserialized/float-1.0/success/python');
    expect(float!.detail?.['numbers']).toContain('1');
    const [big] = of('body-reserialized/big-integer/');
    expect(big!.detail).toMatchObject({ bigIntegers: 1, numbers: expect.arrayContaining(['12345678901234567000']) });
    expect(float!.fix).toMatch(/before any JSON body parser/);
  });

  it('body-modified: names the key that signed', () => {
    for (const d of of('body-modified/')) expect(d.keyId).toBe(ring.keys[0]!.id);
  });
});

describe('inputs', () => {
  const keys = createTestKeyPair();

  it('custom header names, as the receiver takes them', () => {
    const headerNames = { signature: 'X-Acme-Sig', hashAlgorithm: 'X-Acme-Alg' };
    const signed = signPayload(buildTestEvent(), keys.privateKey, { headerNames });
    expect(diagnoseDelivery({ headers: signed.headers, body: signed.body }, { publicKeys: keys.publicKeyPem, headerNames }).cause).toBe(
      'verified',
    );
    // Under the default names the same delivery carries its signature in another header.
    const d = diagnoseDelivery({ headers: signed.headers, body: signed.body }, { publicKeys: keys.publicKeyPem });
    expect(d).toMatchObject({ cause: 'signature-elsewhere', detail: { header: 'x-acme-sig' } });
  });

  it('a fetch Headers and a string body', () => {
    const signed = signPayload(buildTestEvent(), keys.privateKey);
    const d = diagnoseDelivery(
      { headers: new Headers(signed.headers), body: signed.body.toString('utf8') },
      { publicKeys: keys.publicKeyPem },
    );
    expect(d.cause).toBe('verified');
    const moved = breakDelivery(buildTestEvent(), 'signature-elsewhere', { privateKey: keys.privateKey });
    expect(diagnoseDelivery({ headers: new Headers(moved.headers), body: moved.body }, { publicKeys: keys.publicKeyPem }).detail).toEqual({
      header: 'x-signature',
      expected: 'X-Service-Signature',
      onceFixed: 'verified',
    });
  });

  it('the hash-algorithm header comes first, as in the receiver', () => {
    const broken = breakDelivery(buildTestEvent(), 'signature-missing', { privateKey: keys.privateKey });
    const d = diagnoseDelivery(
      { headers: { ...broken.headers, 'X-Service-Hash-Algorithm': 'SHA1' }, body: broken.body },
      { publicKeys: keys.publicKeyPem },
    );
    expect(d.cause).toBe('hash-algorithm');
  });

  it('refuses bad options, never a bad delivery', () => {
    expect(() => diagnoseDelivery({ headers: {}, body: '' }, {} as never)).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    expect(() => diagnoseDelivery({ headers: {}, body: '' }, { publicKeys: 'not a key' })).toThrow(
      expect.objectContaining({ code: 'ERR_KEY_INVALID' }),
    );
    expect(diagnoseDelivery({ headers: {}, body: '' }, { publicKeys: keys.publicKeyPem }).cause).toBe('signature-missing');
  });
});
