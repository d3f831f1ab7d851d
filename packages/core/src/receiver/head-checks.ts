import { JobhookError } from '../errors.js';
import { contentLength, firstValue, isJsonContentType, quoteHeader, readHeaders } from '../http/request-headers.js';
import type { KeyRing } from '../keys/key-ring.js';
import { readHeadSignature } from '../signature/decode-signature.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { recoverSignature, type RecoveredDigest } from '../signature/recover-digest.js';
import { bodyTooLarge } from '../signature/verifier.js';
import type { ReceiverAnswers } from './receiver-answers.js';
import type { ReceiverResponse, RequestHead } from './receiver-types.js';

/** What the head stage found: what the configured keys signed, and the declared `Content-Length`. @internal */
export interface CheckedHead {
  readonly recovered: readonly RecoveredDigest[];
  readonly declared: number | undefined;
}

/** What the head stage needs of its receiver. @internal */
export interface HeadCheckSetup {
  readonly answers: ReceiverAnswers;
  readonly keyRing: KeyRing;
  readonly headerNames: WebhookHeaderNames;
  readonly maxBodyBytes: number;
}

/**
 * The head stage: the checks that need no body, cheapest first, each header read once, then the RSA
 * recovery of what a configured key signed. Answers a refusal, or what the body stage verifies
 * against. `body`, when the caller read it already (`handle`): its length is checked before the RSA
 * operation (the only length check of that path; a body read under an admission has its length
 * checked by the admission stage), and a refusal may capture it.
 * @internal
 */
export function createHeadChecks(
  setup: HeadCheckSetup,
): (started: number, head: RequestHead, body?: Uint8Array) => ReceiverResponse | CheckedHead {
  const { answers, keyRing, headerNames, maxBodyBytes } = setup;
  // The headers read, each once, by their lower-case names (worked out here, not per request).
  const headNames = ['content-type', 'content-length', headerNames.hashAlgorithm.toLowerCase(), headerNames.signature.toLowerCase()];

  return function checkHead(started, head, body) {
    const { method, headers } = head;
    if (method !== 'POST' && method.toUpperCase() !== 'POST') {
      return answers.reject(started, 'ERR_METHOD_NOT_ALLOWED', `webhooks are POSTed; got ${quoteHeader(method)}`, { allow: 'POST' });
    }
    const [typeValue, lengthValue, hashAlgorithm, signature] = readHeaders(headers, headNames);
    const contentType = firstValue(typeValue);
    if (!isJsonContentType(contentType)) {
      return answers.reject(
        started,
        'ERR_UNSUPPORTED_MEDIA_TYPE',
        `expected Content-Type application/json, got ${quoteHeader(contentType)}`,
      );
    }
    const declared = contentLength(firstValue(lengthValue));
    if (declared !== undefined && declared > maxBodyBytes) {
      return answers.reject(started, 'ERR_BODY_TOO_LARGE', `Content-Length is ${declared} bytes; the limit is ${maxBodyBytes}`);
    }
    const tooLarge = body === undefined ? undefined : bodyTooLarge(body, maxBodyBytes);
    if (tooLarge !== undefined) return answers.error(started, 'rejected', tooLarge);
    try {
      // One RSA public operation per key, whatever the body: a signature no key decodes ends here.
      const decoded = readHeadSignature(signature, keyRing, firstValue(hashAlgorithm));
      return { recovered: recoverSignature(decoded, keyRing), declared };
    } catch (err) {
      if (err instanceof JobhookError) return answers.verifyRefusal(started, err, { method, headers, body });
      throw err;
    }
  };
}
