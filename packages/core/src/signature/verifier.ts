import { constants, createHash, verify } from 'node:crypto';
import { JobhookError } from '../errors.js';
import { MAX_MAX_DEPTH, parseBodyUnchecked, resolveParseOptions, type ParseOptions } from '../canonical/parse.js';
import { resolveProfiles, serializeCanonical, type CanonicalProfile } from '../canonical/profiles.js';
import type { ParsedBody } from '../canonical/tape.js';
import { toValue, type JsonObject } from '../canonical/to-value.js';
import { createKeyRing, type KeyRing, type PublicKeyInput } from '../keys/key-ring.js';
import { decodeSignatureHex } from './signature-hex.js';

/** Options of {@link createVerifier}. */
export interface VerifierOptions extends ParseOptions {
  /** The service's public key(s): PEM (PKCS#1 or SPKI), KeyObject, a list of them, or a {@link KeyRing}. */
  keys: PublicKeyInput | readonly PublicKeyInput[] | KeyRing;
  /** Profiles to try, in order. Default: all four, `python` first. */
  profiles?: readonly CanonicalProfile[];
}

/** What a successful verification tells. */
export interface VerifyResult {
  /** The verified payload, parsed once from the body (big integers as `bigint`). */
  payload: JsonObject;
  /** The canonical profile whose bytes the signature covers. */
  profile: CanonicalProfile;
  /** Id of the key that verified (SHA-256 of its SPKI DER, hex). */
  keyId: string;
  /** Lowercase SHA-256 hex of the canonical bytes: what was signed. */
  digest: string;
  /** The canonical bytes. */
  canonical: Buffer;
}

/** One body to verify. */
export interface VerifyInput {
  /** The raw body bytes, exactly as received. A string is taken as its UTF-8 bytes. */
  body: Uint8Array | string;
  /** The signature header value (hex). */
  signature: string | readonly string[] | null | undefined;
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
 * Creates a verifier for the service's webhook signatures: RSA PKCS#1 v1.5 / SHA-256 over the UTF-8
 * bytes of the lowercase SHA-256 hex digest of the canonical JSON.
 *
 * @example
 * ```ts
 * const verifier = createVerifier({ keys: readFileSync('service.pem') });
 * const { payload, profile } = verifier.verify({ body: rawBody, signature: req.headers['x-service-signature'] });
 * ```
 * @throws JobhookError `ERR_KEY_INVALID`, `ERR_OPTION_INVALID` at construction.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  if (typeof options !== 'object' || options === null) {
    throw new JobhookError('ERR_OPTION_INVALID', 'createVerifier: options must be an object with at least `keys`');
  }
  if (options.keys === undefined) {
    throw new JobhookError('ERR_OPTION_INVALID', 'createVerifier: `keys` is required (the service public key PEM)');
  }
  const keyRing = createKeyRing(options.keys);
  const profiles = resolveProfiles(options.profiles, 'createVerifier');
  const { maxBodyBytes, maxDepth } = resolveParseOptions(options, 'createVerifier');

  return Object.freeze({
    keyRing,
    profiles,
    verify(input: VerifyInput): VerifyResult {
      const signature = decodeSignatureHex(input.signature);
      const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
      // verifyParsed builds the payload before returning, so the parse may use the scratch tape.
      const doc = parseBodyUnchecked(body, maxBodyBytes, maxDepth, true, true);
      return verifyParsed(doc, signature, keyRing, profiles);
    },
  });
}

/** Profiles whose canonical form keeps every value of the body (its parse is the signed payload). */
const LOSSLESS_PROFILES: ReadonlySet<CanonicalProfile> = new Set(['python', 'python-ascii']);

/**
 * Verifies a parsed body against every profile and key; the first match wins.
 * @internal
 */
export function verifyParsed(
  doc: ParsedBody,
  signature: Buffer,
  keyRing: KeyRing,
  profiles: readonly CanonicalProfile[],
): VerifyResult {
  const tried: string[] = [];
  for (const profile of profiles) {
    let canonical: Buffer;
    try {
      canonical = serializeCanonical(doc, profile);
    } catch (err) {
      // The profile's reference serializer would have failed on this value, so it cannot have signed it.
      if (err instanceof JobhookError && err.code === 'ERR_CANONICAL_UNREPRESENTABLE') continue;
      throw err;
    }
    const digest = createHash('sha256').update(canonical).digest('hex');
    // Profiles often agree (an ASCII-only payload is the same in python and python-ascii): verify once.
    if (tried.includes(digest)) continue;
    tried.push(digest);
    const signed = Buffer.from(digest, 'latin1');
    for (const key of keyRing.keys) {
      if (verify('sha256', signed, { key: key.key, padding: constants.RSA_PKCS1_PADDING }, signature)) {
        // The signature covers `canonical`, not the body. The python profiles lose nothing, but
        // javascript drops `__proto__` keys and rounds integers to doubles, and orjson writes NaN and
        // Infinity as null: under those the body can hold values no signature covers, so the payload
        // is the signed bytes, parsed.
        const signedDoc = LOSSLESS_PROFILES.has(profile) ? doc : parseBodyUnchecked(canonical, canonical.length, MAX_MAX_DEPTH);
        return { payload: toValue(signedDoc) as JsonObject, profile, keyId: key.id, digest, canonical };
      }
    }
  }
  throw new JobhookError('ERR_SIGNATURE_INVALID', 'the signature does not match the body under any key and profile', {
    detail: { profiles: profiles.length, keys: keyRing.keys.length },
  });
}

/**
 * One-shot verification. Prefer {@link createVerifier} when verifying more than once: it parses the
 * keys once.
 * @throws JobhookError `ERR_SIGNATURE_*`, `ERR_BODY_*`, and `ERR_KEY_INVALID` / `ERR_OPTION_INVALID` for bad options.
 */
export function verifySignature(options: VerifierOptions & VerifyInput): VerifyResult {
  return createVerifier(options).verify(options);
}
