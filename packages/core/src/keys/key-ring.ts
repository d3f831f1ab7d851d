import { createHash, createPublicKey, KeyObject } from 'node:crypto';
import { JobhookError } from '../errors.js';

/** The smallest RSA modulus jobhook accepts, in bits. */
export const MIN_RSA_BITS = 2048;

/**
 * A public key as you may have it: a PEM string or buffer (`BEGIN PUBLIC KEY`, or `BEGIN RSA PUBLIC
 * KEY` as the service publishes it; a private key PEM also works, its public half is used), or a
 * Node.js `KeyObject`.
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
      key = input.type === 'public' ? input : createPublicKey(input);
    } else if (typeof input === 'string' || input instanceof Uint8Array) {
      const pem = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
      if (!pem.includes('-----BEGIN')) throw new Error('not a PEM document (no -----BEGIN line)');
      key = createPublicKey(pem);
    } else {
      throw new Error(`expected a PEM string, a Buffer or a KeyObject, got ${typeof input}`);
    }
  } catch (cause) {
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
