import { JobhookError } from '../errors.js';
import { SameTurnSides } from '../internal/same-turn.js';
import { FloatConversions, FloatPass, type FloatMode } from '../canonical/float-format.js';
import { TRUSTED_INPUT, parseBodyUnchecked, type ParseRun } from '../canonical/parse.js';
import { digestCanonical, serializeCanonicalAs, type CanonicalProfile } from '../canonical/profiles.js';
import { MAX_MAX_DEPTH, resolveBigIntegers, type ParseOptions } from '../canonical/canonical-option-checks.js';
import { F_DEL, F_DOC_BIGINT, F_DOC_FLOAT, F_DOC_NONFINITE, F_ESC, F_NONASCII, F_RAWSURR, type ParsedBody } from '../canonical/tape.js';
import { createSharedKeyOrders, type SharedKeyOrders } from '../canonical/shared-key-orders.js';
import { javascriptWritesAsPython, orjsonWritesAsPython } from '../canonical/writes-as-python.js';
import { nativeFirstPays, nativePythonCandidate } from '../canonical/native-candidate.js';
import { WorkBudget, WorkBudgetExhausted } from '../canonical/work-budget.js';
import { toLosslessValue, toValue, type BigIntegers, type JsonObject, type LosslessJsonValue } from '../canonical/to-value.js';
import { createKeyRing, type KeyRing, type PublicKeyInput } from '../keys/key-ring.js';
import { matchDigest, recoverSignature, type RecoveredDigest } from './recover-digest.js';
import { readSignature } from './decode-signature.js';
import { resolveVerifierOptions } from './signature-option-checks.js';

/** The service's public key(s): PEM (PKCS#1 or SPKI), KeyObject, a list of them, or a {@link KeyRing}. */
type PublicKeys = PublicKeyInput | readonly PublicKeyInput[] | KeyRing;

/** Options of {@link createVerifier}: `publicKeys` (as in `createReceiver`) and the parse limits. */
export interface VerifierOptions extends VerifierBaseOptions {
  /** The service's public key(s): PEM (PKCS#1 or SPKI), KeyObject, a list of them, or a {@link KeyRing}. */
  publicKeys: PublicKeys;
}

/** The options of {@link createVerifier} besides the keys. */
export interface VerifierBaseOptions extends ParseOptions {
  /** Profiles to try, in order. Default: all four, `python` first. */
  profiles?: readonly CanonicalProfile[];
}

/** What a successful verification tells. */
export interface VerifyResult {
  /** The verified payload, parsed once from the body (big integers as `bigint`, or strings: `bigIntegers`). */
  payload: JsonObject;
  /** The canonical profile whose bytes the signature covers. */
  profile: CanonicalProfile;
  /** Id of the key that verified (SHA-256 of its SPKI DER, hex). */
  keyId: string;
  /** Lowercase SHA-256 hex of the canonical bytes: what was signed. */
  digest: string;
  /**
   * The canonical bytes that were signed. Verification only hashes them as they are written, so
   * they are built on first access (from the body, which must not have changed since).
   */
  readonly canonical: Buffer;
  /**
   * The signed payload with every number exactly as the signed bytes write it (floats as `RawJson`
   * holding their lexeme, integers of any size exact), built from {@link canonical}: the lossless
   * value verification vouches for. Use it instead of `toLosslessValue(parseBody(body))`, which
   * reads the body's own lexemes: a signed `null` can arrive as `NaN` or `1e999`, `0.1` as
   * `0.10000000000000000555`, a signed `1e+16` as `10000000000000000.0`, and still verify.
   * Built on each call.
   *
   * @example
   * ```ts
   * const result = verifier.verify({ body: rawBody, signature });
   * stringifyJson(result.losslessPayload()) // the numbers as signed, '1.0' stays '1.0'
   * ```
   */
  losslessPayload(): LosslessJsonValue;
}

/** One body to verify. */
export interface VerifyInput {
  /** The raw body bytes, exactly as received. A string is taken as its UTF-8 bytes. */
  body: Uint8Array | string;
  /** The signature header value (hex). */
  signature: string | readonly string[] | null | undefined;
  /**
   * How the payload holds integers beyond ±(2^53−1): `'bigint'` or `'string'` of their exact digits.
   * **The defaults differ on purpose**: here `'bigint'` (this is the low-level call, whose payload
   * keeps every value exactly as parsed), while `constructEvent` and the receiver default to
   * `'string'` (they hand events to handlers, and `JSON.stringify` throws on a `bigint`). Pass it
   * explicitly when code moves between them.
   */
  bigIntegers?: BigIntegers;
}

/** A reusable verifier: keys parsed and options checked once. */
export interface Verifier {
  /**
   * Verifies one delivery.
   * @throws JobhookError `ERR_SIGNATURE_*` (401), `ERR_BODY_*` (400/413).
   */
  verify(input: VerifyInput): VerifyResult;
  /** The key ring in use. */
  readonly keyRing: KeyRing;
  /** The profiles tried, in order. */
  readonly profiles: readonly CanonicalProfile[];
}

/**
 * The verification of a {@link createVerifier} verifier for a signature its caller decoded already:
 * `constructEvent` decodes it from the request's headers, by the receiver's rules, and does not
 * decode it twice.
 * @internal
 */
export type VerifyDecoded = (body: Uint8Array, signature: Buffer, bigIntegers: BigIntegers) => VerifyResult;

/** The {@link VerifyDecoded} of each verifier {@link createVerifier} made (see internal/same-turn.ts). */
const decodedVerify = new SameTurnSides<Verifier, VerifyDecoded>();

/** `verifier`'s {@link VerifyDecoded}, or undefined for a verifier `createVerifier` did not make. @internal */
export function verifyDecodedOf(verifier: Verifier): VerifyDecoded | undefined {
  return decodedVerify.of(verifier);
}

/**
 * Creates a verifier for the service's webhook signatures: RSA PKCS#1 v1.5 / SHA-256 over the UTF-8
 * bytes of the lowercase SHA-256 hex digest of the canonical JSON.
 *
 * @example
 * ```ts
 * const verifier = createVerifier({ publicKeys: readFileSync('service.pem') });
 * const { payload, profile } = verifier.verify({ body: rawBody, signature: req.headers['x-service-signature'] });
 * ```
 * @throws JobhookError `ERR_KEY_INVALID`, `ERR_OPTION_INVALID` at construction.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const { publicKeys, profiles, limits } = resolveVerifierOptions<PublicKeys>(options);
  const keyRing = createKeyRing(publicKeys);
  // verifyBody builds the payload before returning, so its parse may use the scratch tape.
  const run: ParseRun = { ...limits, scratch: true };

  const verifier: Verifier = Object.freeze({
    keyRing,
    profiles,
    verify(input: VerifyInput): VerifyResult {
      const signature = readSignature(input.signature, keyRing);
      // 'bigint', unlike the receiver and constructEvent: this low-level call keeps every value exactly as parsed.
      const bigIntegers = resolveBigIntegers(input.bigIntegers, 'verify', 'bigint');
      return verifyBody(bodyBytes(input.body), signature, keyRing, profiles, run, bigIntegers);
    },
  });
  decodedVerify.offer(verifier, (body, signature, bigIntegers) => verifyBody(body, signature, keyRing, profiles, run, bigIntegers));
  return verifier;
}

/** A body as bytes: a string is taken as its UTF-8 bytes. @internal */
export function bodyBytes(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/** Limits for re-reading bytes already parsed under the caller's limits (the body, its canonical form). */
const TRUSTED_INPUT_DEEP = { ...TRUSTED_INPUT, maxDepth: MAX_MAX_DEPTH };

/** Profiles whose canonical form keeps every value of the body (its parse is the signed payload). */
const LOSSLESS_PROFILES: ReadonlySet<CanonicalProfile> = new Set(['python', 'python-ascii']);

/**
 * The verify path, in the order that bounds what an unauthenticated request costs:
 * 1. body length against `maxBodyBytes` (no reading);
 * 2. what each key recovers from the signature (one RSA public operation per key): a signature no
 *    key decodes is refused here, whatever the body;
 * 3. the rest, {@link verifyRecovered}.
 * `bigIntegers` is how the payload holds integers beyond ±(2^53−1) (see {@link VerifyInput}).
 * @throws JobhookError `ERR_BODY_TOO_LARGE`, `ERR_SIGNATURE_INVALID`, `ERR_CANONICAL_TOO_LARGE`, `ERR_BODY_*`.
 * @internal
 */
export function verifyBody(
  body: Uint8Array,
  signature: Buffer,
  keyRing: KeyRing,
  profiles: readonly CanonicalProfile[],
  run: ParseRun,
  bigIntegers: BigIntegers = 'bigint',
): VerifyResult {
  const tooLarge = bodyTooLarge(body, run.maxBodyBytes);
  if (tooLarge !== undefined) throw tooLarge;
  return verifyRecovered(body, recoverSignature(signature, keyRing), profiles, run, bigIntegers);
}

/**
 * The refusal (413) of a body over `maxBodyBytes`, or undefined: checked once per path, by
 * {@link verifyBody} and the receiver's head stage (`handle`) before the RSA operation, by the
 * receiver's admission stage when a body comes to `admission.receive`.
 * @internal
 */
export function bodyTooLarge(body: Uint8Array, maxBodyBytes: number): JobhookError | undefined {
  if (body.length <= maxBodyBytes) return undefined;
  return new JobhookError('ERR_BODY_TOO_LARGE', `body has ${body.length} bytes; the limit is ${maxBodyBytes}`, {
    detail: { bytes: body.length, limit: maxBodyBytes },
  });
}

/**
 * The verify path once the signature is decoded (`recovered`: what each key signed, from
 * {@link recoverSignature}; the receiver's precheck recovers it before reading the body), for a body
 * whose length its caller checked ({@link bodyTooLarge}: {@link verifyBody}, the receiver's head or
 * admission stage):
 * 1. when the python profile comes first and the body is one where it pays ({@link nativeFirstPays}:
 *    8 KB or more, with `\u` escapes), its form written by the engine's JSON where that is certain
 *    to be Python's ({@link nativePythonCandidate}): one parse, which is also the payload; anything
 *    doubtful, or no match, goes on to the exact path, which alone refuses;
 * 2. the parse, which bounds every profile's canonical size and refuses a body over `maxCanonicalBytes`;
 * 3. candidate canonical forms, cheapest first, each hashed as it is written and compared with the
 *    recovered hashes: the python profile with numbers as written, then only what can differ; each
 *    object's keys sorted once per sort rule, every byte written charged to a work budget
 *    ({@link verifyWorkBudget}; exhausted, it answers as a mismatch, cause `work-budget`).
 * @throws JobhookError `ERR_SIGNATURE_INVALID`, `ERR_CANONICAL_TOO_LARGE`, `ERR_BODY_*`.
 * @internal
 */
export function verifyRecovered(
  body: Uint8Array,
  recovered: readonly RecoveredDigest[],
  profiles: readonly CanonicalProfile[],
  run: ParseRun,
  bigIntegers: BigIntegers = 'bigint',
): VerifyResult {
  if (profiles[0] === 'python' && (run.nativeFirst ?? nativeFirstPays(body))) {
    const native = nativePythonCandidate(body, run.maxDepth, run.maxCanonicalBytes);
    const match = native === undefined ? undefined : matchDigest(native.digest, recovered);
    if (match !== undefined) {
      return new VerifiedBody(native!.payload, 'python', match.key.id, native!.digest, body, 'exact', undefined);
    }
  }
  const doc = parseBodyUnchecked(body, run);
  const found = findSignedCandidate(doc, profiles, recovered, new WorkBudget(verifyWorkBudget(doc, profiles.length)));
  if (found === 'work-budget') {
    throw new JobhookError('ERR_SIGNATURE_INVALID', 'the signature was made by a configured key, but not over this body', {
      detail: { cause: 'work-budget', keyIds: recovered.map((r) => r.key.id), profiles: profiles.length },
    });
  }
  if (found === undefined) {
    throw new JobhookError('ERR_SIGNATURE_INVALID', 'the signature was made by a configured key, but not over this body', {
      detail: { cause: 'body-mismatch', keyIds: recovered.map((r) => r.key.id), profiles: profiles.length },
    });
  }
  const { profile, floatMode, digest, match, orders } = found;
  // The signature covers the canonical form, not the body. The python profiles lose nothing, but
  // javascript drops `__proto__` keys and rounds integers to doubles, and orjson writes NaN and
  // Infinity as null: under those the body can hold values no signature covers, so the payload
  // is the signed bytes, parsed. So is it when the body holds UTF-8-encoded surrogates: Python keeps
  // them as lone code points, JavaScript strings pair them, so two keys Python tells apart could
  // collide in the body's order instead of the signed form's.
  let canonical: Buffer | undefined;
  let payload: JsonObject;
  if (LOSSLESS_PROFILES.has(profile) && (doc.features & F_RAWSURR) === 0) {
    payload = toValue(doc, { bigIntegers }) as JsonObject;
  } else {
    canonical = serializeCanonicalAs(doc, profile, floatMode, orders);
    payload = toValue(parseBodyUnchecked(canonical, TRUSTED_INPUT_DEEP), { bigIntegers }) as JsonObject;
  }
  return new VerifiedBody(payload, profile, match.key.id, digest, body, floatMode, canonical);
}

/** A {@link VerifyResult} whose canonical bytes are written on first access. */
class VerifiedBody implements VerifyResult {
  constructor(
    readonly payload: JsonObject,
    readonly profile: CanonicalProfile,
    readonly keyId: string,
    readonly digest: string,
    private readonly body: Uint8Array,
    private readonly floatMode: FloatMode,
    private signed: Buffer | undefined,
  ) {}

  get canonical(): Buffer {
    this.signed ??= serializeCanonicalAs(parseBodyUnchecked(this.body, TRUSTED_INPUT_DEEP), this.profile, this.floatMode);
    return this.signed;
  }

  losslessPayload(): LosslessJsonValue {
    return toLosslessValue(parseBodyUnchecked(this.canonical, TRUSTED_INPUT_DEEP));
  }
}

interface SignedCandidate {
  profile: CanonicalProfile;
  floatMode: FloatMode;
  digest: string;
  match: RecoveredDigest;
  /** The key orders the candidates found, for writing the matching form again. */
  orders: SharedKeyOrders;
}

/**
 * Bytes of candidate canonical forms one verification may write: {@link WORK_BYTES_PER_BODY_BYTE}
 * per body byte, or the largest size the body's forms can have once per profile plus once more (the
 * first profile, the service's, written both as written and exactly), whichever is more, plus
 * {@link WORK_FLOOR_BYTES}. Since only one profile is written both ways (see
 * {@link findSignedCandidate}), the forms fit this by construction; it stays as the backstop should
 * a profile or pass be added that breaks that count.
 * @internal
 */
export function verifyWorkBudget(doc: ParsedBody, profileCount: number): number {
  return Math.max(WORK_BYTES_PER_BODY_BYTE * doc.bytes.length, (profileCount + 1) * doc.canonicalBound) + WORK_FLOOR_BYTES;
}

/** Candidate bytes per body byte (see {@link verifyWorkBudget}). @internal */
export const WORK_BYTES_PER_BODY_BYTE = 24;
/** Candidate bytes every verification may write, whatever the body's size. @internal */
export const WORK_FLOOR_BYTES = 256 * 1024;

/** Strings that read the same in every profile: no escapes, no DEL, nothing beyond ASCII. */
const ASCII_SENSITIVE = F_ESC | F_NONASCII | F_DEL;
/** What orjson writes differently from Python: floats (notation), NaN/Infinity, 64-bit overflow. */
const ORJSON_SENSITIVE = F_DOC_FLOAT | F_DOC_NONFINITE | F_DOC_BIGINT;

/** True when `a` and `b` write this body to the same bytes (so trying both is wasted work). */
function sameForBody(doc: ParsedBody, a: CanonicalProfile, b: CanonicalProfile): boolean {
  const pair = (x: CanonicalProfile, y: CanonicalProfile): boolean => (a === x && b === y) || (a === y && b === x);
  const asciiSame = (doc.features & ASCII_SENSITIVE) === 0;
  const orjsonSame = (doc.features & ORJSON_SENSITIVE) === 0 && doc.depth <= 255;
  if (pair('python', 'python-ascii')) return asciiSame;
  if (pair('python', 'orjson')) return orjsonSame;
  if (pair('python-ascii', 'orjson')) return asciiSame && orjsonSame;
  return false;
}

/** True when `profile` writes `doc` as the python profile does (floats exact), on a walk of its floats and keys. */
function writesAsPython(doc: ParsedBody, profile: CanonicalProfile, conversions: FloatConversions): boolean {
  if (profile === 'javascript') return javascriptWritesAsPython(doc, conversions);
  if (profile === 'orjson') return orjsonWritesAsPython(doc, conversions);
  return false;
}

/**
 * Tries the profiles in order, each first with numbers as written (no conversion) and, only when
 * that could differ, with exact conversion; a profile that writes this body like one already tried
 * is skipped. Once one pass could differ from its exact form, the later profiles are written exactly
 * only: the as-written form is a faster way to the exact one where the body's floats are already
 * shortest, and where they are not it is no profile's form (every reference serializer writes the
 * shortest digits), so it could only match by writing the same bytes as the exact pass. Once the
 * python form (exact) was hashed, the orjson and javascript forms are not written where they are
 * the same bytes for this body ({@link orjsonWritesAsPython}, {@link javascriptWritesAsPython}). Each
 * candidate is hashed as it is written, so memory stays bounded; the forms share each object's key
 * order (sorted by the first form of each rule) and each float's conversion, and charge `budget`,
 * whose exhaustion ends the search (`'work-budget'`).
 */
function findSignedCandidate(
  doc: ParsedBody,
  profiles: readonly CanonicalProfile[],
  recovered: readonly RecoveredDigest[],
  budget: WorkBudget,
): SignedCandidate | 'work-budget' | undefined {
  const tried: CanonicalProfile[] = [];
  const digests = new Set<string>();
  // Each object's key order, sorted by the first form of each sort rule and read by the others.
  const orders = createSharedKeyOrders(doc);
  // The first form is the one a delivery from the service matches: it keeps no conversions (keeping
  // costs more than it saves there); the forms after it share theirs.
  let conversions = new FloatConversions();
  let exactOnly = false;
  let pythonExactHashed = false;
  for (const profile of profiles) {
    if (tried.some((t) => sameForBody(doc, t, profile))) continue;
    if (pythonExactHashed && writesAsPython(doc, profile, conversions)) continue;
    tried.push(profile);
    const modes: readonly FloatMode[] = profile === 'javascript' || exactOnly ? ['exact'] : ['as-written', 'exact'];
    for (const floatMode of modes) {
      const pass = new FloatPass(conversions);
      let digest: string;
      try {
        digest = digestCanonical(doc, profile, floatMode, orders, budget, pass);
      } catch (err) {
        // The profile's reference serializer would have failed on this value, so it cannot have signed it.
        if (err instanceof JobhookError && err.code === 'ERR_CANONICAL_UNREPRESENTABLE') break;
        if (err instanceof WorkBudgetExhausted) return 'work-budget';
        throw err;
      }
      if (!digests.has(digest)) {
        digests.add(digest);
        const match = matchDigest(digest, recovered);
        if (match !== undefined) return { profile, floatMode, digest, match, orders };
      }
      if (!conversions.shared) conversions = new FloatConversions(true);
      if (floatMode === 'exact' || !pass.approximated) pythonExactHashed ||= profile === 'python';
      if (!pass.approximated) break; // exact conversion would write the same bytes
      exactOnly = true;
    }
  }
  return undefined;
}
