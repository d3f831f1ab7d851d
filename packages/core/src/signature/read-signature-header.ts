import { JobhookError } from '../errors.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { RequestHeaders } from '../http/request-headers.js';
import { checkSignatureHeaders, HEADER_CAUSE_CODE } from './classify-signature-header.js';
import type { WebhookHeaderNames } from './headers.js';

/**
 * The header checks that come before the body, for the receiver and `constructEvent` alike:
 * {@link checkSignatureHeaders} (the same classifier the diagnosis uses), its cause mapped to an
 * error code by {@link HEADER_CAUSE_CODE}. `detail.cause` keeps the cause for the receiver's log
 * line (the answer body carries only code and message).
 *
 * @returns the decoded signature bytes.
 * @throws JobhookError `ERR_HASH_ALGORITHM_UNSUPPORTED`, `ERR_SIGNATURE_MISSING` (absent or blank),
 * `ERR_SIGNATURE_MALFORMED` (sent twice, not hex, or not as long as a signature of a configured key) (all 401).
 * @internal
 */
export function readSignatureHeader(
  headers: RequestHeaders,
  headerNames: Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm' | 'webhook'>,
  keyRing: KeyRing,
): Buffer {
  const found = checkSignatureHeaders(headers, headerNames, keyRing);
  if (found.ok) return found.signature;
  throw new JobhookError(HEADER_CAUSE_CODE[found.cause], found.message, { detail: { cause: found.cause, ...found.detail } });
}
