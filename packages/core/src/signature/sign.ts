import { constants, createHash, createPrivateKey, KeyObject, sign } from 'node:crypto';
import { JobhookError } from '../errors.js';
import { TRUSTED_INPUT, parseBodyUnchecked } from '../canonical/parse.js';
import { serializeCanonical, type CanonicalProfile } from '../canonical/profiles.js';
import { PYTHON_COMPACT_DUMPS, PYTHON_DEFAULT_DUMPS, serializeTape } from '../canonical/serialize-tape.js';
import { valueToJson } from '../canonical/value-json.js';
import { MIN_RSA_BITS, PRIVATE_PEM, PUBLIC_PEM, notPemMessage } from '../keys/key-ring.js';
import { HASH_ALGORITHM, type WebhookHeaderNames } from './headers.js';
import { resolveSignOptions, type BodyStyle } from './signature-option-checks.js';

/** A private key: PEM (PKCS#1 or PKCS#8) or a `KeyObject`. */
export type PrivateKeyInput = string | Uint8Array | KeyObject;

/** Options of {@link signPayload}. */
export interface SignOptions {
  /** Canonical profile to sign. Default `python` (the service's). */
  profile?: CanonicalProfile;
  /** Layout of the returned body. Default `python`. */
  bodyStyle?: BodyStyle;
  /** Header names. Default the spec's `X-Service-*`. */
  headerNames?: Partial<WebhookHeaderNames>;
  /**
   * Refuse (`ERR_CANONICAL_TOO_LARGE`) a payload whose canonical form may exceed this many bytes,
   * as receivers do with the same option: a sender should not deliver what receivers refuse.
   * Default: no limit.
   */
  maxCanonicalBytes?: number;
}

/** A signed webhook, ready to POST. */
export interface SignedPayload {
  /** The body to send. */
  body: Buffer;
  /** The canonical bytes that were hashed. */
  canonical: Buffer;
  /** Lowercase SHA-256 hex of `canonical`: the signed message. */
  digest: string;
  /** Lowercase hex RSA PKCS#1 v1.5 / SHA-256 signature of `digest`'s UTF-8 bytes. */
  signature: string;
  /** `Content-Type` and the three `X-Service-*` headers of spec §6.1. */
  headers: Record<string, string>;
}

/**
 * Parses and checks a private signing key once.
 * @throws JobhookError `ERR_KEY_INVALID`
 */
export function loadPrivateKey(input: PrivateKeyInput): KeyObject {
  let key: KeyObject;
  if (input instanceof KeyObject) {
    key = input;
  } else {
    const pem = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
    if (!pem.includes('-----BEGIN')) throw new JobhookError('ERR_KEY_INVALID', notPemMessage(pem));
    // OpenSSL's own words for this ("DECODER routines::unsupported") do not say which key is wrong.
    if (PUBLIC_PEM.test(pem) && !PRIVATE_PEM.test(pem)) {
      throw new JobhookError(
        'ERR_KEY_INVALID',
        'this is a public key; signing needs the private key (the file `jobhook keygen` names private.pem)',
      );
    }
    try {
      key = createPrivateKey(pem);
    } catch (cause) {
      throw new JobhookError('ERR_KEY_INVALID', `not a readable private key: ${(cause as Error).message}`, { cause });
    }
  }
  if (key.type === 'public') {
    throw new JobhookError('ERR_KEY_INVALID', 'this is a public key; signing needs the private key');
  }
  if (key.type !== 'private' || key.asymmetricKeyType !== 'rsa') {
    throw new JobhookError('ERR_KEY_INVALID', 'signing needs an RSA private key');
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) {
    throw new JobhookError('ERR_KEY_INVALID', `the private key has ${bits} bits; at least ${MIN_RSA_BITS} are required`);
  }
  return key;
}

/**
 * Signs a payload as the service does (spec §6.3), for the reference sender and for your tests.
 * The payload is a JavaScript value (see {@link RawJson} for exact floats) or the JSON body bytes.
 *
 * @example
 * ```ts
 * const { body, headers } = signPayload({ event: 'async_job_completed', job_id }, privateKeyPem);
 * await fetch(url, { method: 'POST', body, headers });
 * ```
 */
export function signPayload(payload: unknown, privateKey: PrivateKeyInput, options: SignOptions = {}): SignedPayload {
  const prepared = prepareSignature(payload, privateKey, options, 'signPayload');
  return prepared.finish(rsaSign(prepared.key, prepared.digest).toString('hex'));
}

/**
 * {@link signPayload} with the RSA operation on libuv's thread pool (`crypto.sign` with a callback),
 * so a process signing many webhooks uses every core and keeps its event loop free. Same result.
 *
 * @example
 * ```ts
 * const { body, headers } = await signPayloadAsync(payloadBytes, privateKey);
 * ```
 */
export async function signPayloadAsync(payload: unknown, privateKey: PrivateKeyInput, options: SignOptions = {}): Promise<SignedPayload> {
  const prepared = prepareSignature(payload, privateKey, options, 'signPayloadAsync');
  const signature = await new Promise<Buffer>((resolve, reject) => {
    sign('sha256', Buffer.from(prepared.digest, 'latin1'), { key: prepared.key, padding: constants.RSA_PKCS1_PADDING }, (err, sig) =>
      err ? reject(err) : resolve(sig),
    );
  });
  return prepared.finish(signature.toString('hex'));
}

function rsaSign(key: KeyObject, digest: string): Buffer {
  return sign('sha256', Buffer.from(digest, 'latin1'), { key, padding: constants.RSA_PKCS1_PADDING });
}

/** Everything of a signature but the RSA operation: options checked, canonical bytes, digest, body. */
function prepareSignature(payload: unknown, privateKey: PrivateKeyInput, options: SignOptions, caller: string) {
  const { profile, bodyStyle, headerNames: names, maxCanonicalBytes } = resolveSignOptions(options, caller);
  const key = loadPrivateKey(privateKey);
  const bytes = payload instanceof Uint8Array ? payload : Buffer.from(valueToJson(payload), 'utf8');
  const doc = parseBodyUnchecked(bytes, { ...TRUSTED_INPUT, maxCanonicalBytes });
  const canonical = serializeCanonical(doc, profile);
  const digest = createHash('sha256').update(canonical).digest('hex');
  const body =
    bodyStyle === 'canonical' ? canonical : serializeTape(doc, bodyStyle === 'python' ? PYTHON_DEFAULT_DUMPS : PYTHON_COMPACT_DUMPS);
  // A receiver canonicalizes the BODY, so it must read back to the signed form. Under the lossy
  // profiles it may not (JSON.parse cannot read the Infinity a Python-style body writes for an
  // overflowing number): never hand out a delivery that no receiver can verify.
  if (bodyStyle !== 'canonical' && (profile === 'javascript' || profile === 'orjson')) {
    const readBack = serializeCanonical(parseBodyUnchecked(body, TRUSTED_INPUT), profile);
    if (!readBack.equals(canonical)) {
      throw new JobhookError(
        'ERR_CANONICAL_UNREPRESENTABLE',
        `${caller}: a ${bodyStyle}-style body of this payload does not read back to its ${profile} canonical form; use bodyStyle 'canonical'`,
      );
    }
  }
  const finish = (signature: string): SignedPayload => ({
    body,
    canonical,
    digest,
    signature,
    headers: {
      'Content-Type': 'application/json',
      [names.webhook]: 'true',
      [names.signature]: signature,
      [names.hashAlgorithm]: HASH_ALGORITHM,
    },
  });
  return { key, digest, finish };
}
