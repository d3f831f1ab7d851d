/**
 * constructEvent: one call from body + headers + keys to a typed event or a JobhookError, checked
 * against the repository's signature vectors, against the receiver's own answers, and for the
 * JSON-safe event values (big integers as strings of their digits by default).
 */
import { describe, expect, it } from 'vitest';
import {
  constructEvent,
  createKeyRing,
  createReceiver,
  createVerifier,
  JobhookError,
  silentLogger,
  type AsyncJobCompletedEvent,
  type ErrorCode,
  type RequestHeaders,
} from '../src/index.js';
import { signPayload } from '../src/sign/index.js';
import { ERROR_STATUS } from '../src/errors.js';
import { buildSignedRequest, createTestKeyPair, signTestEvent } from '../src/testing/index.js';
import { codeOf } from './helpers/error-code.js';
import { allowed, loadVectors, type Outcome, type VectorCase } from './helpers/signature-vectors.js';

const loaded = loadVectors();
const keys = createTestKeyPair();

/** The event, or the JobhookError constructEvent threw (anything else propagates: a bug, never a verdict). */
function attempt(fn: () => AsyncJobCompletedEvent): AsyncJobCompletedEvent | JobhookError {
  try {
    return fn();
  } catch (err) {
    if (err instanceof JobhookError) return err;
    throw err;
  }
}

/** A verified body of another shape is still a verified signature: `valid`, refused at the shape. */
function outcomeOf(got: AsyncJobCompletedEvent | JobhookError): Outcome {
  if (!(got instanceof JobhookError) || got.code === 'ERR_PAYLOAD_INVALID') return 'valid';
  return got.code.startsWith('ERR_SIGNATURE') ? 'invalid' : 'malformed';
}

function vectorHeaders(c: VectorCase): Record<string, string> {
  return { 'content-type': 'application/json', 'x-service-signature': c.signature, 'x-service-hash-algorithm': 'SHA256' };
}

/** `value` with every bigint written as its decimal digits. */
function bigintsAsDigits(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(bigintsAsDigits);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(copy, k, { value: bigintsAsDigits(v), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

function countBigints(value: unknown): number {
  if (typeof value === 'bigint') return 1;
  if (typeof value !== 'object' || value === null) return 0;
  return Object.values(value).reduce((n: number, v) => n + countBigints(v), 0);
}

/** What `fn` throws (failing when it returns). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('constructEvent on the signature vectors (vectors/vectors.jsonl)', () => {
  it('are present', () => {
    if (loaded.error !== null) throw new Error(loaded.error);
    expect(loaded.cases.length).toBeGreaterThan(0);
  });
  const pems = loaded.keys;
  if (pems === null) return;
  // Built once, as a hot path would: the keys are parsed here, not per call.
  const verifier = createVerifier({ publicKeys: pems.mainPkcs1 });

  it.each(loaded.cases)('$id [$category] is $expect', (c) => {
    const got = attempt(() => constructEvent(c.body, vectorHeaders(c), verifier));
    const detail = got instanceof JobhookError ? ` (${got.code}: ${got.message})` : '';
    expect(allowed(c.expect), `case ${c.id}: got ${outcomeOf(got)}${detail}`).toContain(outcomeOf(got));
    if (got instanceof JobhookError) {
      expect(got.status).toBe(ERROR_STATUS[got.code]);
      return;
    }
    // What a handler would store: JSON.stringify works on every verified event.
    expect(() => JSON.stringify(got)).not.toThrow();
  });

  it('returns the event of every realistic webhook, with its job_id', () => {
    const realistic = loaded.cases.filter((c) => c.category.startsWith('realistic-'));
    expect(realistic.length).toBe(240);
    for (const c of realistic) {
      const event = constructEvent(c.body, vectorHeaders(c), verifier);
      expect(event.job_id).toBe((JSON.parse(c.body.toString('utf8')) as { job_id: string }).job_id);
      expect(['success', 'fail']).toContain(event.status);
    }
  });

  it('hands over the bigint payload with each bigint as its digits, and nothing else changed', () => {
    let bigints = 0;
    for (const c of loaded.cases.filter((v) => v.expect === 'valid')) {
      const asBigint = attempt(() => constructEvent(c.body, vectorHeaders(c), verifier, { bigIntegers: 'bigint' }));
      const asString = attempt(() => constructEvent(c.body, vectorHeaders(c), verifier));
      if (asBigint instanceof JobhookError) {
        expect(asString, c.id).toMatchObject({ code: asBigint.code });
        continue;
      }
      bigints += countBigints(asBigint);
      expect(asString, c.id).toEqual(bigintsAsDigits(asBigint));
    }
    expect(bigints, 'big integers seen in the valid vectors').toBeGreaterThan(100);
  });

  it('trap-big-ints: JSON.stringify throws on the bigint form and keeps every digit of the default one', () => {
    const c = loaded.cases.find((v) => v.id === 'trap-big-ints-298');
    expect(c, 'the big-integer vector with an event shape').toBeDefined();
    expect(() => JSON.stringify(constructEvent(c!.body, vectorHeaders(c!), verifier, { bigIntegers: 'bigint' }))).toThrow(TypeError);
    const event = constructEvent(c!.body, vectorHeaders(c!), verifier);
    expect(JSON.stringify(event.user_parameters)).toBe('{"minus_zero":0,"e":"18446744073709551617","f":"-9223372036854775809"}');
    // The verifier hands over the same on request (its default stays bigint): a 300-digit integer.
    const longest = loaded.cases.find((v) => v.category === 'trap-big-ints' && v.body.includes('"longest"'));
    const digits = /"longest": (\d+)/.exec(longest!.body.toString('latin1'))![1]!;
    expect(digits.length).toBeGreaterThan(100);
    const { payload } = verifier.verify({ body: longest!.body, signature: longest!.signature, bigIntegers: 'string' });
    expect(JSON.stringify(payload)).toContain(`"longest":"${digits}"`);
    expect(verifier.verify({ body: longest!.body, signature: longest!.signature }).payload).toMatchObject({
      user_parameters: { longest: BigInt(digits) },
    });
  });

  it('NaN and ±Infinity arrive as numbers, which JSON.stringify writes as null', () => {
    const c = loaded.cases.find((v) => v.id === 'trap-nonfinite-331');
    expect(c).toBeDefined();
    const event = constructEvent(c!.body, vectorHeaders(c!), verifier);
    expect(event.user_parameters).toEqual({ overflow: Number.POSITIVE_INFINITY, negative: Number.NEGATIVE_INFINITY });
    expect(JSON.stringify(event.user_parameters)).toBe('{"overflow":null,"negative":null}');
    const all = loaded.cases.find((v) => v.category === 'trap-nonfinite' && v.body.includes('"all"'));
    const { payload } = verifier.verify({ body: all!.body, signature: all!.signature, bigIntegers: 'string' });
    expect(payload['user_parameters']).toEqual({ all: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1] });
    expect(JSON.stringify(payload['user_parameters'])).toBe('{"all":[null,null,null,1]}');
  });

  it('throws the code the receiver answers, for every vector it refuses', async () => {
    const receiver = createReceiver({ publicKeys: pems.mainSpki, onEvent: () => {}, logger: silentLogger });
    let compared = 0;
    for (const c of loaded.cases) {
      const got = attempt(() => constructEvent(c.body, vectorHeaders(c), pems.mainSpki));
      if (!(got instanceof JobhookError)) continue;
      const res = await receiver.handle({ method: 'POST', headers: vectorHeaders(c), rawBody: c.body });
      expect({ id: c.id, status: res.status, code: res.outcome.code }).toEqual({ id: c.id, status: got.status, code: got.code });
      compared++;
    }
    expect(compared).toBeGreaterThan(100);
    await receiver.close();
  });
});

describe('constructEvent: headers', () => {
  const signed = signTestEvent({ output: { text: 'hi' } }, { privateKey: keys.privateKey });
  const signature = signed.signature;

  it.each<[string, RequestHeaders]>([
    ['a Node headers object (lower-case names)', { 'x-service-signature': signature, 'x-service-hash-algorithm': 'SHA256' }],
    ['a Node headers object with array values', { 'x-service-signature': [signature], 'x-service-hash-algorithm': 'SHA256' }],
    ["a record with the spec's capitalised names", { 'X-Service-Signature': signature, 'X-Service-Hash-Algorithm': 'sha256' }],
    ['a fetch Headers', new Headers({ 'X-SERVICE-SIGNATURE': signature, 'X-Service-Hash-Algorithm': 'SHA256' })],
    ['no hash-algorithm header (optional)', { 'x-service-signature': ` ${signature.toUpperCase()} ` }],
  ])('reads %s', (_shape, headers) => {
    const event = constructEvent(signed.body, headers, keys.publicKeyPem);
    expect(event).toEqual(signed.event);
  });

  it('takes the body as a Buffer, a Uint8Array, an ArrayBuffer or a string', () => {
    const headers = { 'x-service-signature': signature };
    const u8 = new Uint8Array(signed.body);
    for (const body of [signed.body, u8, u8.buffer, signed.body.toString('utf8')]) {
      expect(constructEvent(body, headers, keys.publicKeyPem).job_id).toBe(signed.event.job_id);
    }
  });

  it('reads the header names given as headerNames', () => {
    const headers = { 'x-sig': signature, 'x-alg': 'SHA256' };
    const headerNames = { signature: 'X-Sig', hashAlgorithm: 'X-Alg' };
    expect(constructEvent(signed.body, headers, keys.publicKeyPem, { headerNames }).job_id).toBe(signed.event.job_id);
    expect(codeOf(() => constructEvent(signed.body, headers, keys.publicKeyPem))).toBe('ERR_SIGNATURE_MISSING');
    expect(codeOf(() => constructEvent(signed.body, headers, keys.publicKeyPem, { headerNames: { signature: 'bad name' } }))).toBe(
      'ERR_OPTION_INVALID',
    );
  });

  it.each<[string, RequestHeaders, ErrorCode]>([
    ['no signature header', {}, 'ERR_SIGNATURE_MISSING'],
    ['an empty signature', { 'x-service-signature': '  ' }, 'ERR_SIGNATURE_MISSING'],
    ['two signature headers', { 'x-service-signature': [signature, signature] }, 'ERR_SIGNATURE_MALFORMED'],
    ['a signature that is not hex', { 'x-service-signature': `zz${signature.slice(2)}` }, 'ERR_SIGNATURE_MALFORMED'],
    ['a signature of the wrong length', { 'x-service-signature': signature.slice(0, 64) }, 'ERR_SIGNATURE_MALFORMED'],
    ['another hash algorithm', { 'x-service-signature': signature, 'x-service-hash-algorithm': 'SHA1' }, 'ERR_HASH_ALGORITHM_UNSUPPORTED'],
  ])('refuses %s, 401 as the receiver does', async (_case, headers, code) => {
    const thrown = thrownBy(() => constructEvent(signed.body, headers, keys.publicKeyPem));
    expect(thrown).toBeInstanceOf(JobhookError);
    expect(thrown).toMatchObject({ code, status: 401 });
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger });
    const res = await receiver.handle({
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      rawBody: signed.body,
    });
    expect(res.outcome).toMatchObject({ code, status: 401 });
  });
});

describe('constructEvent: keys and options', () => {
  const request = buildSignedRequest({ output: { text: 'hi' } }, { privateKey: keys.privateKey });

  it('reuses a KeyRing (a rotation: the second key verifies) and a Verifier', () => {
    const previous = createTestKeyPair(3072);
    const ring = createKeyRing([previous.publicKeyPem, keys.publicKeyPem]);
    expect(constructEvent(request.rawBody, request.headers, ring)).toEqual(request.event);
    const verifier = createVerifier({ publicKeys: ring, profiles: ['python'] });
    for (let i = 0; i < 3; i++) expect(constructEvent(request.rawBody, request.headers, verifier)).toEqual(request.event);
  });

  it("applies a Verifier's limits and refuses them again in the call", () => {
    const small = createVerifier({ publicKeys: keys.publicKeyPem, maxBodyBytes: 64 });
    expect(codeOf(() => constructEvent(request.rawBody, request.headers, small))).toBe('ERR_BODY_TOO_LARGE');
    expect(codeOf(() => constructEvent(request.rawBody, request.headers, small, { maxDepth: 10 }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(() => constructEvent(request.rawBody, request.headers, keys.publicKeyPem, { maxBodyBytes: 64 }))).toBe(
      'ERR_BODY_TOO_LARGE',
    );
  });

  it('refuses a signature over another body, a payload of another shape, and a parsed body', () => {
    const tampered = Buffer.from(request.rawBody.toString('utf8').replace('"hi"', '"ho"'));
    expect(codeOf(() => constructEvent(tampered, request.headers, keys.publicKeyPem))).toBe('ERR_SIGNATURE_INVALID');
    const other = signPayload({ hello: 'world' }, keys.privateKey);
    const headers = { 'x-service-signature': other.signature };
    expect(thrownBy(() => constructEvent(other.body, headers, keys.publicKeyPem))).toMatchObject({
      code: 'ERR_PAYLOAD_INVALID',
      status: 400,
      message: expect.stringContaining('payload.event'),
    });
    const parsed = JSON.parse(request.rawBody.toString('utf8')) as unknown;
    expect(codeOf(() => constructEvent(parsed as string, request.headers, keys.publicKeyPem))).toBe('ERR_BODY_ALREADY_PARSED');
  });

  it('refuses a bigIntegers value it does not know', () => {
    const options = { bigIntegers: 'number' } as unknown as { bigIntegers: 'string' };
    expect(codeOf(() => constructEvent(request.rawBody, request.headers, keys.publicKeyPem, options))).toBe('ERR_OPTION_INVALID');
  });
});

describe('constructEvent: event values a handler can store as JSON', () => {
  const big = 123456789012345678901234567890n;
  const signed = signTestEvent(
    {
      output: { id: big, negative: -big, safe: 9007199254740991, unsafe: 9007199254740992n, score: 0.5, items: [big] },
    },
    { privateKey: keys.privateKey },
  );
  const headers = { 'x-service-signature': signed.signature };

  it('a 30-digit integer arrives as the string of its digits, and JSON.stringify keeps them all', () => {
    const event = constructEvent(signed.body, headers, keys.publicKeyPem);
    if (event.status !== 'success') throw new Error('expected a success event');
    expect(event.output).toEqual({
      id: '123456789012345678901234567890',
      negative: '-123456789012345678901234567890',
      safe: 9007199254740991,
      unsafe: '9007199254740992',
      score: 0.5,
      items: ['123456789012345678901234567890'],
    });
    const stored = JSON.stringify(event.output);
    expect(stored).toContain('"id":"123456789012345678901234567890"');
    expect(BigInt((JSON.parse(stored) as { id: string }).id)).toBe(big);
  });

  it("bigIntegers: 'bigint' keeps them bigint", () => {
    const event = constructEvent(signed.body, headers, keys.publicKeyPem, { bigIntegers: 'bigint' });
    if (event.status !== 'success') throw new Error('expected a success event');
    expect(event.output).toMatchObject({ id: big, negative: -big, safe: 9007199254740991, unsafe: 2n ** 53n, items: [big] });
    expect(() => JSON.stringify(event.output)).toThrow(TypeError);
  });
});
