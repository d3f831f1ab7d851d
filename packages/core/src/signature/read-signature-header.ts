import { JobhookError } from '../errors.js';
import type { KeyRing } from '../keys/key-ring.js';
import { firstHeader, readHeader, type RequestHeaders } from '../receiver/request-headers.js';
import { HASH_ALGORITHM, type WebhookHeaderNames } from './headers.js';
import { decodeSignatureHex } from './signature-hex.js';

/**
 * The header checks that come before the body, for the receiver and `constructEvent` alike: the
 * hash-algorithm header, when sent, names SHA256 (either case); the signature header is there, once,
 * even-length hex, and as long as a signature of one of the ring's keys (so a truncated or padded
 * one costs no RSA operation).
 *
 * @returns the decoded signature bytes.
 * @throws JobhookError `ERR_HASH_ALGORITHM_UNSUPPORTED`, `ERR_SIGNATURE_MISSING`, `ERR_SIGNATURE_MALFORMED` (all 401).
 * @internal
 */
export function readSignatureHeader(
  headers: RequestHeaders,
  headerNames: Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm'>,
  keyRing: KeyRing,
): Buffer {
  const hashAlgorithm = firstHeader(headers, headerNames.hashAlgorithm);
  if (hashAlgorithm !== undefined && hashAlgorithm.trim().toUpperCase() !== HASH_ALGORITHM) {
    throw new JobhookError(
      'ERR_HASH_ALGORITHM_UNSUPPORTED',
      `${headerNames.hashAlgorithm} must be ${HASH_ALGORITHM}, got ${hashAlgorithm}`,
    );
  }
  const signature = decodeSignatureHex(readHeader(headers, headerNames.signature));
  const bytesOf = (bits: number): number => (bits + 7) >> 3;
  if (!keyRing.keys.some((k) => bytesOf(k.bits) === signature.length)) {
    const expected = [...new Set(keyRing.keys.map((k) => bytesOf(k.bits) * 2))].join(' or ');
    throw new JobhookError(
      'ERR_SIGNATURE_MALFORMED',
      `the signature has ${signature.length * 2} hex digits; the configured keys make ${expected}`,
    );
  }
  return signature;
}
