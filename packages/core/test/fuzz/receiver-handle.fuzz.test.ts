/**
 * Property-based fuzzing of the receive pipeline through `receiver.handle`, the one entry point every
 * adapter uses. What must hold whatever arrives:
 * - `handle` never throws or rejects, and never answers 5xx for a bad request (the sender would retry it);
 * - it never accepts an invalid signature: 2xx only when the body's canonical form (core's
 *   `canonicalize`, under some profile) is exactly the signed one, and the headers are acceptable;
 * - the handler runs at most once per `job_id`;
 * - with the idempotency store down, a valid delivery answers 503 (retry) and an invalid one 4xx.
 *
 * Fixed anchor cases pin the oracle's verdict on the re-spellings that matter (`1.0` → `1` refused,
 * `1.00` accepted, ...). Core bugs this fuzzer found are kept as regression tests at the end.
 *
 * FUZZ_RUNS (total cases, default 5,000) and FUZZ_SEED: see fuzz-config.ts.
 * `npm run fuzz` runs this folder alone; `FUZZ_RUNS=200000 npm run fuzz` is the long run.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKeyRing,
  createMemoryStore,
  createReceiver,
  JobhookError,
  type CanonicalProfile,
  type ErrorCode,
  type IdempotencyStore,
  type KeyRing,
  type Receiver,
  type ReceiverRequest,
  type ReceiverResponse,
} from '../../src/index.js';
import { signPayload } from '../../src/sign/index.js';
import { parseBody, toValue } from '../../src/json/index.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { buildTestEvent, createTestKeyPair, signTestEvent } from '../../src/testing/index.js';
import {
  buildLargeBody,
  eventTextArb,
  largeBodyArb,
  smallBodyBytesArb,
  wildJsonArb,
  wildSignatureArb,
  type WildSignature,
} from './arbitraries.js';
import { applyMutation, mutationArb } from './body-mutations.js';
import { buildHeaders, CONTENT_TYPES, HASH_ALGORITHMS, headerChoiceArb, PLAIN_HEADERS, type BuiltHeaders } from './request-headers.js';
import { buildDeliveryPool, eventShapeOk, matchingProfiles, parsesAsObject, sameJson, type PoolEntry } from './delivery-pool.js';
import { FUZZ_RUNS, FUZZ_SEED, runsFor, timeoutFor } from './fuzz-config.js';

/** The receiver's default body limit, which these receivers keep. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Statuses the receiver documents for requests to drop. */
const REFUSALS = [400, 401, 405, 413, 415];

const options = (share: number) => ({ seed: FUZZ_SEED, numRuns: runsFor(share) });

/** A receiver whose handler counts its runs per job. */
interface Harness {
  receiver: Receiver;
  runs: Map<string, number>;
}

/**
 * What the receiver must do with a (mutated) pool delivery: `accept` when the headers are
 * acceptable, the body's canonical form is the signed one under some profile, and the event has the
 * spec's shape; `refuse` otherwise. `either` is the one case a known core bug decides (see the
 * `known integrity gaps` tests): only a lossy profile matched, and the body's own value, which core
 * hands over today, is not an event although the signed one is.
 */
function judge(
  built: BuiltHeaders,
  body: Buffer,
  entry: PoolEntry,
): { verdict: 'accept' | 'refuse' | 'either'; profiles: CanonicalProfile[] } {
  const profiles = built.ok ? matchingProfiles(body, entry.canonical) : [];
  if (profiles.length === 0) return { verdict: 'refuse', profiles };
  if (eventShapeOk(body)) return { verdict: 'accept', profiles };
  // A lossless profile's canonical form keeps every value: had one matched, the body would be the signed event.
  expect(profiles.every((p) => p === 'javascript' || p === 'orjson')).toBe(true);
  return { verdict: 'either', profiles };
}

/** Checks what every answer must be, and returns its code (errors) or duplicate flag (200). */
function checkAnswer(res: ReceiverResponse): { code?: ErrorCode; duplicate?: boolean; jobId?: string } {
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.outcome.status).toBe(res.status);
  const body = JSON.parse(res.body) as { ok?: boolean; duplicate?: boolean; job_id?: string; error?: { code: ErrorCode; message: string } };
  if (res.status === 200) {
    expect(body.ok).toBe(true);
    return { duplicate: body.duplicate!, jobId: body.job_id! };
  }
  expect(body.error).toBeDefined();
  expect(ERROR_STATUS[body.error!.code]).toBe(res.status);
  expect(typeof body.error!.message).toBe('string');
  if (res.status === 503) expect(res.headers['retry-after']).toMatch(/^\d+$/);
  return { code: body.error!.code };
}

describe(`receiver.handle fuzz (FUZZ_SEED=${FUZZ_SEED}, FUZZ_RUNS=${FUZZ_RUNS})`, () => {
  const keys = createTestKeyPair();
  let ring: KeyRing;
  let wrongKey: KeyObject;
  let pool: PoolEntry[];
  let shared: Harness;
  const opened: Receiver[] = [];

  /** A receiver with a counting handler; `track` ones are closed after the suite. */
  function harness(store?: IdempotencyStore, track = true): Harness {
    const runs = new Map<string, number>();
    const receiver = createReceiver({
      publicKeys: ring,
      ...(store === undefined ? {} : { store }),
      onEvent: (event) => void runs.set(event.job_id, (runs.get(event.job_id) ?? 0) + 1),
    });
    if (track) opened.push(receiver);
    return { receiver, runs };
  }

  beforeAll(() => {
    ring = createKeyRing(keys.publicKeyPem);
    wrongKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    pool = buildDeliveryPool(keys.privateKey);
    shared = harness();
  });

  afterAll(async () => {
    await Promise.all(opened.map((r) => r.close()));
  });

  const share1 = runsFor(0.2);
  it(
    'random bytes with valid-looking headers: never thrown, never accepted, 400/401/413/415',
    async () => {
      const h = harness();
      await fc.assert(
        fc.asyncProperty(
          // Large bodies are described, not spelled out, so a counterexample stays readable.
          fc.oneof(
            { arbitrary: smallBodyBytesArb.map((bytes) => ({ small: Buffer.from(bytes) })), weight: 60 },
            { arbitrary: largeBodyArb.map((large) => ({ large })), weight: 1 },
          ),
          fc.uint8Array({ minLength: 256, maxLength: 256 }),
          headerChoiceArb(4).map((c) => ({ ...c, method: 0, signature: 0 })),
          fc.boolean(),
          async (spec, sig, choice, asString) => {
            const bytes = 'small' in spec ? spec.small : buildLargeBody(spec.large);
            const { method, headers } = buildHeaders(choice, Buffer.from(sig).toString('hex'));
            // A string body is taken as its UTF-8 bytes, which may differ from (and outgrow) the original.
            const rawBody = asString ? bytes.toString('utf8') : bytes;
            const size = asString ? Buffer.byteLength(rawBody, 'utf8') : bytes.length;
            const res = await h.receiver.handle({ method, headers, rawBody });
            checkAnswer(res);
            const ctOk = CONTENT_TYPES[choice.contentType]!.ok;
            const hashOk = HASH_ALGORITHMS[choice.hashAlgorithm]!.ok;
            if (!ctOk) expect(res.status).toBe(415);
            // Too large with a bad hash-algorithm header: either refusal may come first.
            else if (size > MAX_BODY_BYTES) expect(hashOk ? [413] : [401, 413]).toContain(res.status);
            else expect([400, 401]).toContain(res.status);
            expect(h.runs.size).toBe(0);
          },
        ),
        options(0.2),
      );
    },
    timeoutFor(share1, 1),
  );

  const share2 = runsFor(0.25);
  it(
    'random JSON signed with a wrong key, a random or replayed signature, or none: never accepted, 400/401',
    async () => {
      const h = harness();
      let wrongKeySigned = 0;
      await fc.assert(
        fc.asyncProperty(wildJsonArb, wildSignatureArb, async (body, how: WildSignature) => {
          let signature: string | undefined;
          switch (how.kind) {
            case 'none':
              signature = undefined;
              break;
            case 'random':
              signature = Buffer.from(how.bytes).toString('hex');
              break;
            case 'malformed':
              signature = how.text;
              break;
            case 'replay':
              signature = pool[how.index % pool.length]!.signature;
              break;
            case 'wrong-key':
              try {
                signature = signPayload(body, wrongKey, { profile: how.profile }).signature;
                wrongKeySigned++;
              } catch {
                signature = Buffer.alloc(256, 7).toString('hex'); // not signable: not JSON, too deep, ...
              }
              break;
          }
          const { method, headers } = buildHeaders(PLAIN_HEADERS, signature);
          const res = await h.receiver.handle({ method, headers, rawBody: body });
          checkAnswer(res);
          // Signature first: only a signature the key decodes (a replayed one) gets the body parsed.
          const expected = how.kind === 'replay' && !parsesAsObject(body) ? 400 : 401;
          expect(res.status).toBe(expected);
          expect(h.runs.size).toBe(0);
        }),
        options(0.25),
      );
      // The wrong-key case is the one that matters most: make sure it was not starved.
      expect(wrongKeySigned).toBeGreaterThan(runsFor(0.25) / 20);
    },
    timeoutFor(share2, 3),
  );

  const share3 = runsFor(0.4);
  it(
    'mutated valid deliveries: accepted exactly when the canonical form is the signed one; handler at most once per job',
    async () => {
      let accepted = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.nat(),
          mutationArb,
          headerChoiceArb(6),
          fc.constantFrom<'shared' | 'fresh'>('shared', 'shared', 'fresh'),
          fc.oneof({ arbitrary: fc.constant(1), weight: 9 }, fc.constant(2)),
          async (index, mutation, choice, which, concurrency) => {
            const entry = pool[index % pool.length]!;
            const body = applyMutation(entry.body, mutation);
            const built = buildHeaders(choice, entry.signature);
            const { verdict, profiles } = judge(built, body, entry);
            // A small store: the default one allocates its 100,000-entry LRU up front (~18 ms).
            const h = which === 'shared' ? shared : harness(createMemoryStore({ max: 64 }), false);
            const before = h.runs.get(entry.jobId) ?? 0;
            const request: ReceiverRequest = { method: built.method, headers: built.headers, rawBody: body };
            const answers = await Promise.all(Array.from({ length: concurrency }, () => h.receiver.handle(request)));
            const runsAfter = h.runs.get(entry.jobId) ?? 0;
            expect(runsAfter).toBeLessThanOrEqual(1);
            const wasAccepted = answers.some((r) => r.status === 200);
            for (const res of answers) {
              const { code, duplicate, jobId } = checkAnswer(res);
              if (verdict === 'accept' || (verdict === 'either' && wasAccepted)) {
                // Concurrent copies of one delivery: one runs, the other finds it in flight or done.
                if (res.status === 503) {
                  expect(concurrency).toBe(2);
                  expect(code).toBe('ERR_JOB_IN_FLIGHT');
                  continue;
                }
                expect(res.status).toBe(200);
                expect(jobId).toBe(entry.jobId);
                if (concurrency === 1) expect(duplicate).toBe(before === 1);
                expect(profiles).toContain(res.outcome.profile);
                // The handler gets what was signed, nothing else, whatever profile matched.
                expect(sameJson(res.event, entry.signedValue)).toBe(true);
              } else {
                expect(REFUSALS).toContain(res.status);
                if (!built.ok) expect(built.refusal).toContain(res.status);
                else if (verdict === 'either') expect(code).toBe('ERR_PAYLOAD_INVALID');
                else expect([400, 401]).toContain(res.status);
              }
            }
            if (wasAccepted) {
              expect(verdict).not.toBe('refuse');
              expect(runsAfter).toBe(1);
              accepted++;
            } else {
              expect(verdict).not.toBe('accept');
              expect(runsAfter).toBe(before);
              refused++;
            }
            if (which === 'fresh') await h.receiver.close();
          },
        ),
        options(0.4),
      );
      // Both sides of the oracle must have been exercised in earnest.
      expect(accepted).toBeGreaterThan(runsFor(0.4) / 10);
      expect(refused).toBeGreaterThan(runsFor(0.4) / 10);
    },
    timeoutFor(share3, 2),
  );

  const share4 = runsFor(0.1);
  it(
    'store down: valid deliveries answer 503 with Retry-After, invalid ones 4xx, the handler never runs',
    async () => {
      const failure = (how: 'reject' | 'reject-other' | 'throw'): IdempotencyStore => {
        const fail = (): never => {
          throw how === 'reject-other' ? new TypeError('socket closed') : new JobhookError('ERR_STORE_UNAVAILABLE', 'store down');
        };
        const op = how === 'throw' ? fail : async () => fail();
        return { claim: op, complete: op, release: op, extend: op, close: async () => {} };
      };
      const stores = {
        reject: harness(failure('reject')),
        'reject-other': harness(failure('reject-other')),
        throw: harness(failure('throw')),
      };
      await fc.assert(
        fc.asyncProperty(
          fc.nat(),
          mutationArb,
          headerChoiceArb(10),
          fc.constantFrom<'reject' | 'reject-other' | 'throw'>('reject', 'reject-other', 'throw'),
          async (index, mutation, choice, how) => {
            const entry = pool[index % pool.length]!;
            const body = applyMutation(entry.body, mutation);
            const built = buildHeaders(choice, entry.signature);
            const { verdict } = judge(built, body, entry);
            const { receiver, runs } = stores[how];
            const res = await receiver.handle({ method: built.method, headers: built.headers, rawBody: body });
            const { code } = checkAnswer(res);
            if (verdict === 'accept' || (verdict === 'either' && res.status === 503)) {
              expect(res.status).toBe(503);
              expect(code).toBe('ERR_STORE_UNAVAILABLE');
              expect(res.outcome.kind).toBe('store-unavailable');
            } else {
              expect(REFUSALS).toContain(res.status);
              if (!built.ok) expect(built.refusal).toContain(res.status);
            }
            expect(runs.size).toBe(0);
          },
        ),
        options(0.1),
      );
    },
    timeoutFor(share4, 2),
  );

  const share5 = runsFor(0.05);
  it(
    'randomly shaped events signed with the right key: always verify, 200 exactly when the shape is valid',
    async () => {
      const h = harness();
      let signed = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          eventTextArb,
          fc.constantFrom<CanonicalProfile>('python', 'python', 'python-ascii', 'orjson', 'javascript'),
          fc.constantFrom<'python' | 'canonical' | 'compact'>('python', 'canonical', 'compact'),
          async (text, profile, bodyStyle) => {
            let payload: ReturnType<typeof signPayload>;
            try {
              payload = signPayload(Buffer.from(text, 'utf8'), keys.privateKey, { profile, bodyStyle });
            } catch (err) {
              // The profile's reference could not have signed it (NaN in javascript, 2^64 in orjson, ...),
              // or the body style cannot carry it: the only refusal allowed here.
              expect(err).toMatchObject({ code: 'ERR_CANONICAL_UNREPRESENTABLE' });
              refused++;
              return;
            }
            signed++;
            const request = { method: 'POST', headers: buildHeaders(PLAIN_HEADERS, payload.signature).headers, rawBody: payload.body };
            const res = await h.receiver.handle(request);
            const { code } = checkAnswer(res);
            // signPayload refuses a body its profile cannot read back (see the tests at the end), so
            // whatever it signed must verify.
            expect(res.status).not.toBe(401);
            // The two differ only under a lossy profile (the known core bug): then either answer is allowed.
            const bodyShapeOk = eventShapeOk(payload.body);
            const signedShapeOk = eventShapeOk(payload.canonical);
            if (bodyShapeOk !== signedShapeOk) expect(['javascript', 'orjson']).toContain(profile);
            expect(bodyShapeOk === signedShapeOk ? [bodyShapeOk ? 200 : 400] : [200, 400]).toContain(res.status);
            if (res.status === 400) {
              expect(code).toBe('ERR_PAYLOAD_INVALID');
              return;
            }
            expect(res.status).toBe(200);
            const jobId = (res.event as { job_id: string }).job_id;
            expect(h.runs.get(jobId)).toBe(1);
            expect(sameJson(res.event, toValue(parseBody(payload.canonical), { bigIntegers: 'string' }))).toBe(true);
          },
        ),
        options(0.05),
      );
      expect(signed).toBeGreaterThan(runsFor(0.05) / 2);
      expect(refused).toBeLessThan(signed);
    },
    timeoutFor(share5, 5),
  );

  describe('anchors: fixed cases the oracle and the receiver must agree on', () => {
    const floats = () => pool.find((e) => e.label.startsWith('floats'))!;
    const send = (entry: PoolEntry, body: string | Buffer, signature = entry.signature) =>
      createReceiver({ publicKeys: ring, onEvent: () => {}, store: createMemoryStore({ max: 8 }) }).handle({
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': signature },
        rawBody: body,
      });

    it.each([
      ['1.0 re-spelled 1 (Python reads an int: another canonical form)', '"one": 1.0', '"one": 1', 401],
      ['1.0 re-spelled 1.00 (the same float)', '"one": 1.0', '"one": 1.00', 200],
      ['100.0 re-spelled 1e2 (the same float)', '"hundred": 100.0', '"hundred": 1e2', 200],
      ['100 re-spelled 100.0 (int to float)', '"int": 100', '"int": 100.0', 401],
      ['100 re-spelled 1e2 (int to float)', '"int": 100', '"int": 1e2', 401],
      ['1e+16 re-spelled 10000000000000000 (float to int)', '"big": 1e+16', '"big": 10000000000000000', 401],
      ['-0.0 re-spelled 0.0 (sign of zero)', '"negzero": -0.0', '"negzero": 0.0', 401],
      ['0.1 re-spelled 0.1000000000000000000001 (rounds to the same double)', '"tenth": 0.1', '"tenth": 0.1000000000000000000001', 200],
    ])('%s', async (_label, from, to, status) => {
      const entry = floats();
      const text = entry.body.toString('utf8');
      expect(text).toContain(from);
      const body = text.replace(from, to);
      expect(matchingProfiles(Buffer.from(body), entry.canonical).length > 0).toBe(status === 200);
      expect((await send(entry, body)).status).toBe(status);
    });

    it('keys reordered, re-spaced and re-escaped: the same canonical form, accepted', async () => {
      const entry = floats();
      const body = applyMutation(entry.body, {
        spacing: { kind: 'json-whitespace', seed: 7 },
        tree: [
          { op: 'reorder', target: 0, seed: 1 },
          { op: 'reorder', target: 1, seed: 2 },
          { op: 'reescape', target: 0, choices: [1, 2, 3] },
        ],
        bytes: [],
      });
      expect(body.equals(entry.body)).toBe(false);
      expect((await send(entry, body)).status).toBe(200);
    });

    it('the signature in upper case is accepted; one changed digit is not', async () => {
      const entry = pool[0]!;
      expect((await send(entry, entry.body, entry.signature.toUpperCase())).status).toBe(200);
      const flipped = (entry.signature[0] === '0' ? '1' : '0') + entry.signature.slice(1);
      expect((await send(entry, entry.body, flipped)).status).toBe(401);
    });
  });

  /**
   * Regressions of a core bug this fuzzer found: a signature that matches under the `javascript` or
   * `orjson` profile covers that profile's LOSSY canonical form, yet the handler got the lossless
   * parse of the received body, so data no signature covered reached the handler. Now the payload
   * is the signed canonical bytes, parsed, under those profiles.
   */
  describe('lossy profiles: the handler gets only what was signed', () => {
    async function deliver(overrides: Record<string, unknown>, mutate: (body: string) => string) {
      const signed = signTestEvent(overrides, { privateKey: keys.privateKey });
      const body = mutate(signed.body.toString('utf8'));
      expect(body).not.toBe(signed.body.toString('utf8'));
      const receiver = createReceiver({ publicKeys: ring, onEvent: () => {}, store: createMemoryStore({ max: 8 }) });
      const res = await receiver.handle({
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': signed.signature },
        rawBody: body,
      });
      // Correct behaviour: refused, or the event handed over is exactly what was signed.
      if (res.status === 200) expect(sameJson(res.event, toValue(parseBody(signed.canonical), { bigIntegers: 'string' }))).toBe(true);
      else expect(res.status).toBe(401);
    }

    it('an unsigned "__proto__" member reaches the handler (javascript profile drops it from its canonical form)', async () => {
      await deliver({}, (body) => body.replace(/^\{/, '{"__proto__": {"admin": true}, '));
    });

    it('an integer beyond 2^53 is swapped for a neighbour that rounds to the same double (javascript profile)', async () => {
      await deliver({ user_parameters: { n: 2n ** 53n } }, (body) => body.replace('9007199254740992', '9007199254740993'));
    });

    it('a signed null is swapped for 1e400, handed over as Infinity (orjson writes Infinity as null)', async () => {
      await deliver({ output: { score: null } }, (body) => body.replace('"score": null', '"score": 1e400'));
    });

    it('signPayload under the javascript profile, of a number that overflows to Infinity: refuses a python-style body, signs a canonical one that verifies', async () => {
      // JSON.parse reads 1e400 as Infinity and JSON.stringify writes null, so the javascript canonical
      // form is signable; but a python-style body says Infinity, which JSON.parse refuses, so no
      // receiver could verify it (401, and the sender never retries a 4xx). signPayload must refuse
      // that body, and the body it recommends instead (bodyStyle 'canonical') must verify.
      // (1e16 keeps the orjson profile, which writes it `1e16`, from matching by chance.)
      const text = JSON.stringify(buildTestEvent()).replace('"model":null', '"model":1e400,"size":1e16');
      expect(text).toContain('1e400');
      for (const bodyStyle of ['python', 'compact'] as const) {
        expect(() => signPayload(Buffer.from(text), keys.privateKey, { profile: 'javascript', bodyStyle })).toThrow(
          expect.objectContaining({ code: 'ERR_CANONICAL_UNREPRESENTABLE' }),
        );
      }
      // What the refusal prevents: the python-style body of this payload, signed over its javascript
      // canonical form, is refused by the receiver (so the refusal is not needless).
      const canonicalSigned = signPayload(Buffer.from(text), keys.privateKey, { profile: 'javascript', bodyStyle: 'canonical' });
      const pythonStyle = signPayload(Buffer.from(text.replace('1e400', '1.0')), keys.privateKey, { profile: 'python' })
        .body.toString('utf8')
        .replace('"model": 1.0', '"model": Infinity');
      expect(pythonStyle).toContain('"model": Infinity');
      const post = (rawBody: string | Buffer, signature: string) =>
        createReceiver({ publicKeys: ring, onEvent: () => {}, store: createMemoryStore({ max: 8 }) }).handle({
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-signature': signature },
          rawBody,
        });
      expect((await post(pythonStyle, canonicalSigned.signature)).status).toBe(401);
      // The canonical-style body verifies, and the handler gets exactly what was signed.
      expect(canonicalSigned.body.toString('utf8')).toMatch(/"model":\s*null/);
      const res = await post(canonicalSigned.body, canonicalSigned.signature);
      expect(res.status).toBe(200);
      expect(sameJson(res.event, toValue(parseBody(canonicalSigned.canonical), { bigIntegers: 'string' }))).toBe(true);
    });
  });
});
