import { JobhookError } from '../errors.js';

/**
 * Decodes a signature header value: hex, either case, surrounding whitespace ignored.
 * @throws JobhookError `ERR_SIGNATURE_MISSING` (absent or empty), `ERR_SIGNATURE_MALFORMED` (not even-length hex).
 * @internal
 */
export function decodeSignatureHex(signature: string | readonly string[] | null | undefined): Buffer {
  if (Array.isArray(signature)) {
    if (signature.length > 1) {
      throw new JobhookError('ERR_SIGNATURE_MALFORMED', 'more than one signature header was sent');
    }
    return decodeSignatureHex(signature[0]);
  }
  const text = typeof signature === 'string' ? signature.trim() : '';
  if (text === '') throw new JobhookError('ERR_SIGNATURE_MISSING', 'no signature was sent');
  // An RSA-16384 signature is 4096 hex characters; anything longer is not a signature.
  // Buffer.from stops at the first pair that is not hex, so a short result means "not hex".
  const bytes = text.length > 4096 || text.length % 2 !== 0 ? undefined : Buffer.from(text, 'hex');
  if (bytes === undefined || bytes.length * 2 !== text.length) {
    throw new JobhookError('ERR_SIGNATURE_MALFORMED', 'the signature is not an even-length hex string');
  }
  return bytes;
}
