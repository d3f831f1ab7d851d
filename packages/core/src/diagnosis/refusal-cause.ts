import type { HeaderCause, RefusalCause } from '../causes.js';
import type { JobhookError } from '../errors.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { checkSignatureHeaders } from '../signature/classify-signature-header.js';

/** The log fields of a refusal's cause: `cause` and what names it (`header`, `shape`, `keyIdsTried`, `keyId`). @internal */
export interface RefusalCauseFields {
  cause: RefusalCause;
  [field: string]: unknown;
}

const HEADER_CODES: ReadonlySet<string> = new Set(['ERR_HASH_ALGORITHM_UNSUPPORTED', 'ERR_SIGNATURE_MISSING', 'ERR_SIGNATURE_MALFORMED']);
const BODY_CODES: ReadonlySet<string> = new Set(['ERR_BODY_MALFORMED', 'ERR_BODY_NOT_OBJECT', 'ERR_BODY_TOO_DEEP']);

/**
 * The cheap cause of a refusal, from the error the verify path threw and the request's headers
 * (string work on headers Node already bounds; no RSA, nothing of the body), or undefined when the
 * refusal is not a signature or body failure (method, content type, size, payload shape, replay).
 * A header refusal carries its cause from the one classifier (`detail.cause` of `readSignatureHeader`'s
 * error); the log line then says the code and the cause, which differ only for `unknown-key`
 * (`ERR_SIGNATURE_MALFORMED`: a signature of another key size, refused without RSA).
 * @internal
 */
export function refusalCause(
  error: JobhookError,
  headers: RequestHeaders,
  names: WebhookHeaderNames,
  keyRing: KeyRing,
): RefusalCauseFields | undefined {
  if (HEADER_CODES.has(error.code)) {
    let detail = error.detail as { cause?: HeaderCause } | undefined;
    if (detail?.cause === undefined) {
      const found = checkSignatureHeaders(headers, names, keyRing);
      if (found.ok) return undefined;
      detail = { ...found.detail, cause: found.cause };
    }
    const { cause, header, shape, keyIdsTried, signatureBits } = detail as {
      cause: HeaderCause;
      header?: string;
      shape?: string;
      keyIdsTried?: string[];
      signatureBits?: number;
    };
    return {
      cause,
      ...(header === undefined ? {} : { header }),
      ...(shape === undefined ? {} : { shape }),
      ...(keyIdsTried === undefined ? {} : { keyIdsTried }),
      ...(signatureBits === undefined ? {} : { signatureBits }),
    };
  }
  if (error.code === 'ERR_SIGNATURE_INVALID') {
    const { cause, keyIds } = (error.detail ?? {}) as { cause?: string; keyIds?: string[] };
    if (cause === 'unknown-key') return { cause: 'unknown-key', keyIdsTried: keyIds ?? [] };
    if (cause === 'work-budget') return { cause: 'work-budget', ...(keyIds?.[0] === undefined ? {} : { keyId: keyIds[0] }) };
    return { cause: 'body-mismatch', ...(keyIds?.[0] === undefined ? {} : { keyId: keyIds[0] }) };
  }
  if (BODY_CODES.has(error.code)) return { cause: 'body-malformed' };
  return undefined;
}
