import { createHash, createPublicKey, KeyObject } from 'node:crypto';
import { JobhookError } from '../errors.js';

/** The smallest RSA modulus jobhook accepts, in bits. */
export const MIN_RSA_BITS = 2048;

/**
 * A public key as you may have it: a PEM string or buffer (`BEGIN PUBLIC KEY`, or `BEGIN RSA PUBLIC
 * KEY` as the service publishes it), or a Node.js `KeyObject`. A private key is refused: a receiver
 * never needs the service's signing key, and holding it would let anyone who reads the receiver's
 * configuration sign deliveries.
 */
export type PublicKeyInput = string | Uint8Array | KeyObject;

/** One verified-usable key of a {@link KeyRing}. */
export interface RingKey {
  /** Stable id: lowercase hex SHA-256 of the key's SPKI DER encoding. */
  readonly id: string;
  /** The parsed public key. */
  readonly key: KeyObject;
  /** Modulus length in bits. */
  readonly bits: number;
}

/** Parsed public keys, tried in order; several keys make a rotation possible. */
export interface KeyRing {
  readonly keys: readonly RingKey[];
  /** The key with that id, if any. */
  find(id: string): RingKey | undefined;
}

const RING = Symbol.for('jobhook.keyRing');

/** True when `value` was made by {@link createKeyRing}. */
export function isKeyRing(value: unknown): value is KeyRing {
  return typeof value === 'object' && value !== null && (value as { [RING]?: true })[RING] === true;
}

/**
 * Parses public keys once, for every later verification.
 *
 * @example
 * ```ts
 * const ring = createKeyRing([readFileSync('service.pem'), readFileSync('service-next.pem')]);
 * ring.keys.map((k) => k.id);
 * ```
 * @throws JobhookError `ERR_KEY_INVALID` for an unreadable, non-RSA or under-2048-bit key, or an empty list.
 */
export function createKeyRing(input: PublicKeyInput | readonly PublicKeyInput[] | KeyRing): KeyRing {
  if (isKeyRing(input)) return input;
  const list = Array.isArray(input) ? (input as readonly PublicKeyInput[]) : [input as PublicKeyInput];
  if (list.length === 0) throw new JobhookError('ERR_KEY_INVALID', 'a key ring needs at least one public key');
  const keys: RingKey[] = [];
  for (const [i, item] of list.entries()) {
    const key = loadPublicKey(item, list.length > 1 ? `key #${i + 1}` : 'the key');
    if (!keys.some((k) => k.id === key.id)) keys.push(key);
  }
  const byId = new Map(keys.map((k) => [k.id, k]));
  return Object.freeze({
    [RING]: true as const,
    keys: Object.freeze(keys),
    find: (id: string) => byId.get(id),
  });
}

/**
 * Parses one public key and checks it is RSA with at least 2048 bits.
 * @throws JobhookError `ERR_KEY_INVALID`
 */
export function loadPublicKey(input: PublicKeyInput, label = 'the key'): RingKey {
  let key: KeyObject;
  try {
    if (input instanceof KeyObject) {
      if (input.type === 'private') throw privateKeyGiven(label);
      key = input.type === 'public' ? input : createPublicKey(input);
    } else if (typeof input === 'string' || input instanceof Uint8Array) {
      const pem = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
      if (!pem.includes('-----BEGIN')) throw new Error(notPemMessage(pem));
      if (PRIVATE_PEM.test(pem)) throw privateKeyGiven(label);
      key = createPublicKey(pem);
    } else {
      throw new Error(`expected a PEM string, a Buffer or a KeyObject, got ${typeof input}`);
    }
  } catch (cause) {
    if (cause instanceof JobhookError) throw cause;
    throw new JobhookError('ERR_KEY_INVALID', `${label} is not a readable public key: ${(cause as Error).message}`, {
      cause,
    });
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new JobhookError(
      'ERR_KEY_INVALID',
      `${label} is ${key.asymmetricKeyType ?? 'unknown'}; webhook signatures are RSA PKCS#1 v1.5, so an RSA key is needed`,
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) {
    throw new JobhookError('ERR_KEY_INVALID', `${label} has ${bits} bits; at least ${MIN_RSA_BITS} are required`);
  }
  const id = createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex');
  return Object.freeze({ id, key, bits });
}

/** A PEM block of any private key type: `PRIVATE KEY`, `RSA PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, … @internal */
export const PRIVATE_PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** A PEM block of a public key: `PUBLIC KEY` (SPKI) or `RSA PUBLIC KEY` (PKCS#1). @internal */
export const PUBLIC_PEM = /-----BEGIN (RSA )?PUBLIC KEY-----/;

function privateKeyGiven(label: string): JobhookError {
  return new JobhookError(
    'ERR_KEY_INVALID',
    `${label} is a private key; give the receiver only the service's public key (it never needs the signing key). ` +
      'Derive the public half with `openssl rsa -in private.pem -pubout`; `jobhook keygen` writes both files.',
  );
}

/**
 * Why a string that is not PEM was refused: a file path passed instead of the file's contents is
 * the usual mistake, so it is named as such (with the call that reads the file).
 * @internal
 */
export function notPemMessage(text: string): string {
  const trimmed = text.trim();
  if (looksLikePath(trimmed)) {
    const shown = trimmed.length > 120 ? `${trimmed.slice(0, 120)}…` : trimmed;
    return `not a PEM document: ${JSON.stringify(shown)} looks like a file path; pass the file's contents (readFileSync(${JSON.stringify(shown)})), not its path`;
  }
  return 'not a PEM document (no -----BEGIN line)';
}

function looksLikePath(text: string): boolean {
  if (text === '' || text.length > 4096 || /[\r\n]/.test(text)) return false;
  return /\.(pem|key|pub|crt|der|txt)$/i.test(text) || /^(\.{0,2}\/|~\/|[A-Za-z]:[\\/])/.test(text) || text.includes('/');
}
