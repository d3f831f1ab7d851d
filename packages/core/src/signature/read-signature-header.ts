import { JobhookError } from '../errors.js';
import type { HeaderValue, RequestHeaders } from '../http/request-headers.js';
import type { KeyRing } from '../keys/key-ring.js';
import { checkSignatureHeaders, classifySignature, HEADER_CAUSE_CODE, type HeaderFinding } from './classify-signature-header.js';
import type { WebhookHeaderNames } from './headers.js';

/**
 * The decoded signature of a finding, or its refusal thrown: the cause mapped to an error code by
 * {@link HEADER_CAUSE_CODE}, `detail.cause` keeping the cause for the receiver's log line (the
 * answer body carries only code and message).
 * @throws JobhookError `ERR_HASH_ALGORITHM_UNSUPPORTED`, `ERR_SIGNATURE_MISSING` (absent or blank),
 * `ERR_SIGNATURE_MALFORMED` (sent twice, not hex, or not as long as a signature of a configured key) (all 401).
 * @internal
 */
export function signatureOf(found: HeaderFinding): Buffer {
  if (found.ok) return found.signature;
  throw new JobhookError(HEADER_CAUSE_CODE[found.cause], found.message, { detail: { cause: found.cause, ...found.detail } });
}

/**
 * The header checks that come before the body, for `constructEvent`: {@link checkSignatureHeaders}
 * (the one decoder, which the receiver and the diagnosis use too), a refusal thrown.
 * @returns the decoded signature bytes.
 * @throws JobhookError as {@link signatureOf}.
 * @internal
 */
export function readSignatureHeader(
  headers: RequestHeaders,
  headerNames: Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm' | 'webhook'>,
  keyRing: KeyRing,
): Buffer {
  return signatureOf(checkSignatureHeaders(headers, headerNames, keyRing));
}

/**
 * A signature given as a value (`verifier.verify`), decoded by the same rules as the receiver's header.
 * @throws JobhookError as {@link signatureOf}.
 * @internal
 */
export function readSignatureValue(signature: HeaderValue | null, keyRing: KeyRing): Buffer {
  return signatureOf(classifySignature(undefined, signature, keyRing));
}
