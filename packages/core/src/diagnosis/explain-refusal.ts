import type { RefusalCause } from '../causes.js';
import type { JobhookError } from '../errors.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { KeyRing } from '../keys/key-ring.js';
import { signatureRefusal } from '../signature/decode-signature.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { findSignature } from './signature-findings.js';

/** The log fields of a refusal's cause: `cause` and what names it (`header`, `shape`, `keyIdsTried`, `keyId`). @internal */
export interface RefusalCauseFields {
  cause: RefusalCause;
  [field: string]: unknown;
}

/** A refusal of the verify path as the diagnosis explains it. @internal */
export interface ExplainedRefusal {
  /** The error to answer with: the refusal's own, or for a header refusal one of the same code whose message says why. */
  readonly error: JobhookError;
  /** The log line's cause fields; `cause` also names the `captureFailures` file. */
  readonly cause: RefusalCauseFields;
}

const HEADER_CODES: ReadonlySet<string> = new Set(['ERR_HASH_ALGORITHM_UNSUPPORTED', 'ERR_SIGNATURE_MISSING', 'ERR_SIGNATURE_MALFORMED']);
const BODY_CODES: ReadonlySet<string> = new Set(['ERR_BODY_MALFORMED', 'ERR_BODY_NOT_OBJECT', 'ERR_BODY_TOO_DEEP']);

/**
 * The receiver's one hook into the diagnosis, called only on a refusal of its verify path: the cheap
 * cause (string work on headers Node already bounds; no RSA, nothing of the body), and for a header
 * refusal the answer's message that says why. The head stage decodes a good signature without the
 * diagnosis and refuses with the code alone (`readHeadSignature`); this works out the rest from the
 * request's headers, as the diagnosis does ({@link findSignature}): a signature another header holds
 * (`signature-elsewhere`), how a value is malformed (`detail.shape`), hex of another key's size
 * (`unknown-key`, still `ERR_SIGNATURE_MALFORMED`: refused without RSA, so the log line's code and
 * cause differ). A refusal after the RSA operation keeps its error: `ERR_SIGNATURE_INVALID` is
 * `unknown-key`, `work-budget` or `body-mismatch` from its `detail.cause`, a body code `body-malformed`.
 * @returns undefined when the refusal is not a signature or body failure (method, content type,
 * size, payload shape, replay): answered as it is, with no cause.
 * @internal
 */
export function explainRefusal(
  error: JobhookError,
  request: { readonly headers: RequestHeaders },
  names: WebhookHeaderNames,
  keyRing: KeyRing,
): ExplainedRefusal | undefined {
  if (HEADER_CODES.has(error.code)) {
    const found = findSignature(request.headers, names, keyRing);
    // Headers that decode on a second read (a headers object that answers differently): nothing to explain.
    if (found.ok) return undefined;
    const { header, shape, keyIdsTried, signatureBits } = found.detail as {
      header?: string;
      shape?: string;
      keyIdsTried?: string[];
      signatureBits?: number;
    };
    const cause: RefusalCauseFields = {
      cause: found.cause,
      ...(header === undefined ? {} : { header }),
      ...(shape === undefined ? {} : { shape }),
      ...(keyIdsTried === undefined ? {} : { keyIdsTried }),
      ...(signatureBits === undefined ? {} : { signatureBits }),
    };
    return { error: signatureRefusal(found), cause };
  }
  if (error.code === 'ERR_SIGNATURE_INVALID') {
    const { cause, keyIds } = (error.detail ?? {}) as { cause?: string; keyIds?: string[] };
    const keyId = keyIds?.[0] === undefined ? {} : { keyId: keyIds[0] };
    if (cause === 'unknown-key') return { error, cause: { cause: 'unknown-key', keyIdsTried: keyIds ?? [] } };
    return { error, cause: { cause: cause === 'work-budget' ? 'work-budget' : 'body-mismatch', ...keyId } };
  }
  if (BODY_CODES.has(error.code)) return { error, cause: { cause: 'body-malformed' } };
  return undefined;
}

/**
 * The signature headers of a request, decoded, for `constructEvent`, which throws as the receiver
 * answers: a refusal with the message the receiver's answer has ({@link explainRefusal}).
 * @returns the decoded signature bytes.
 * @throws JobhookError `ERR_HASH_ALGORITHM_UNSUPPORTED`, `ERR_SIGNATURE_MISSING`, `ERR_SIGNATURE_MALFORMED` (all 401).
 * @internal
 */
export function readSignatureHeader(headers: RequestHeaders, names: WebhookHeaderNames, keyRing: KeyRing): Buffer {
  const found = findSignature(headers, names, keyRing);
  if (found.ok) return found.signature;
  throw signatureRefusal(found);
}
