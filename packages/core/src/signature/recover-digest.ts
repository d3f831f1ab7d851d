import { constants, hash, publicDecrypt, timingSafeEqual } from 'node:crypto';
import { JobhookError } from '../errors.js';
import type { KeyRing, RingKey } from '../keys/key-ring.js';

/** DER prefix of a PKCS#1 v1.5 DigestInfo for SHA-256 (RFC 8017 §9.2, note 1); the 32-byte hash follows. */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');
const DIGEST_INFO_LENGTH = SHA256_DIGEST_INFO.length + 32;

/** What one key recovers from a signature: the SHA-256 of the message it signed. @internal */
export interface RecoveredDigest {
  readonly key: RingKey;
  /** SHA-256 of the signed message, i.e. of the canonical form's lowercase hex digest. */
  readonly hash: Buffer;
}

/**
 * Recovers what each key of the ring signed, before anything of the body is read. With PKCS#1 v1.5
 * the public operation returns the padded DigestInfo; a signature that is not of the key's length,
 * whose padding is not type 1 or that holds another hash decodes under no key, and costs one RSA
 * public operation per key whatever the body.
 * @internal
 */
export function recoverDigests(signature: Buffer, keyRing: KeyRing): RecoveredDigest[] {
  const found: RecoveredDigest[] = [];
  for (const key of keyRing.keys) {
    if (signature.length !== (key.bits + 7) >> 3) continue;
    let info: Buffer;
    try {
      info = publicDecrypt({ key: key.key, padding: constants.RSA_PKCS1_PADDING }, signature);
    } catch {
      continue; // ERR_OSSL_RSA_*: not a PKCS#1 v1.5 signature under this key
    }
    if (info.length === DIGEST_INFO_LENGTH && info.subarray(0, SHA256_DIGEST_INFO.length).equals(SHA256_DIGEST_INFO)) {
      found.push({ key, hash: info.subarray(SHA256_DIGEST_INFO.length) });
    }
  }
  return found;
}

/**
 * {@link recoverDigests}, refusing a signature that no configured key decodes: the step the receiver
 * runs before reading a body, and `verifyBody` before parsing one.
 * @throws JobhookError `ERR_SIGNATURE_INVALID` (401), `detail.cause` `unknown-key`.
 * @internal
 */
export function recoverSignature(signature: Buffer, keyRing: KeyRing): RecoveredDigest[] {
  const recovered = recoverDigests(signature, keyRing);
  if (recovered.length === 0) {
    throw new JobhookError('ERR_SIGNATURE_INVALID', 'the signature was not made by any configured key', {
      detail: { cause: 'unknown-key', keyIds: keyRing.keys.map((k) => k.id) },
    });
  }
  return recovered;
}

/**
 * The recovered digest that signed `digestHex` (the lowercase SHA-256 hex of a candidate canonical
 * form), compared in constant time, or undefined.
 * @internal
 */
export function matchDigest(digestHex: string, recovered: readonly RecoveredDigest[]): RecoveredDigest | undefined {
  const signed = hash('sha256', digestHex, 'buffer');
  let match: RecoveredDigest | undefined;
  for (const r of recovered) {
    if (timingSafeEqual(signed, r.hash) && match === undefined) match = r;
  }
  return match;
}
