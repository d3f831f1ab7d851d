/**
 * Every cause jobhook names, each written once, in groups; every list of causes is made of these
 * groups, so a cause is added or renamed here and nowhere else. In the order they are decided:
 *
 * - `verified`: no failure (a diagnosis's answer for a delivery that verifies).
 * - `headers` ({@link HeaderCause}): what the signature headers alone tell, before any body:
 *   refused as `ERR_HASH_ALGORITHM_UNSUPPORTED`, `ERR_SIGNATURE_MISSING` or `ERR_SIGNATURE_MALFORMED`.
 *   `unknown-key` is also what the RSA operation tells of a signature no configured key made
 *   (`ERR_SIGNATURE_INVALID`).
 * - `body`: the body a configured key signed does not parse (`body-malformed`).
 * - `bodyChanges`: why a body a configured key signed does not match, told apart by the change that
 *   explains it. Only the offline diagnosis tells them: it takes trying candidate bodies.
 * - `bodyMismatch`: the same failure as a receiver tells it within its bounds: `body-mismatch`, or
 *   `work-budget` (the body's candidate forms outgrew the verification's work budget first).
 * - `signatureShapes` ({@link SignatureShape}): how a `signature-malformed` value is wrong (`detail.shape`).
 * - `recipientTag` ({@link RecipientTagCause}): why a verified delivery's recipient tag was refused (`detail.cause`).
 *
 * The public lists are unions of groups: {@link DiagnosisCause} (`diagnoseDelivery`, `jobhook doctor`)
 * is `verified`, `headers`, `body` and `bodyChanges`: it splits `body-mismatch` on purpose.
 * {@link RefusalCause} (a receiver's refusal: the log line's `cause` field and the name of a
 * `captureFailures` file) is `headers`, `body` and `bodyMismatch`.
 * @internal
 */
export const CAUSES = {
  verified: ['verified'],
  headers: ['hash-algorithm', 'signature-missing', 'signature-elsewhere', 'signature-malformed', 'unknown-key'],
  body: ['body-malformed'],
  bodyChanges: ['body-transcoded', 'body-reserialized', 'body-modified'],
  bodyMismatch: ['body-mismatch', 'work-budget'],
  signatureShapes: ['repeated', 'prefixed', 'quoted', 'base64', 'separators', 'digest', 'odd-length', 'truncated', 'too-long', 'not-hex'],
  recipientTag: ['missing', 'malformed', 'mac', 'url', 'future', 'expired', 'reused'],
} as const;

/** The refusal causes the signature headers alone can tell. @internal */
export type HeaderCause = (typeof CAUSES)['headers'][number];

/** How a present but unusable signature header value is wrong. @internal */
export type SignatureShape = (typeof CAUSES)['signatureShapes'][number];

/**
 * Why a webhook signature fails, in the order the diagnosis decides: the header causes, then
 * `unknown-key`, `body-malformed`, `verified`, and the body changes last (the most specific
 * explanation that holds wins). Whitespace, newlines, key order and `\u` escapes are not causes:
 * the canonical form ignores them.
 */
export type DiagnosisCause = (typeof CAUSES)['verified' | 'headers' | 'body' | 'bodyChanges'][number];

/** Every {@link DiagnosisCause}, `verified` first, then the failures in the order they are decided. */
export const DIAGNOSIS_CAUSES: readonly DiagnosisCause[] = Object.freeze([
  ...CAUSES.verified,
  ...CAUSES.headers,
  ...CAUSES.body,
  ...CAUSES.bodyChanges,
]);

/** True when `value` names a {@link DiagnosisCause}. */
export function isDiagnosisCause(value: unknown): value is DiagnosisCause {
  return (DIAGNOSIS_CAUSES as readonly unknown[]).includes(value);
}

/**
 * The causes a receiver can tell while refusing a request within its verify-path bounds: the header
 * causes, `body-malformed`, `body-mismatch` (a configured key signed, the body differs), and
 * `work-budget` (a configured key signed, and the body's candidate forms outgrew the verification's
 * work budget before one matched: answered as a mismatch). Telling a mismatch apart (transcoded,
 * re-serialized, modified) takes candidate bodies, which only the offline diagnosis tries.
 */
export type RefusalCause = (typeof CAUSES)['headers' | 'body' | 'bodyMismatch'][number];

/** Every {@link RefusalCause}, in the order the receiver decides them. @internal */
export const REFUSAL_CAUSES: readonly RefusalCause[] = Object.freeze([...CAUSES.headers, ...CAUSES.body, ...CAUSES.bodyMismatch]);

/**
 * Why a tag was refused: `missing`; `malformed`; `mac` (another secret, or altered); `url` (made for
 * another URL); `future`; `expired`; `reused` (valid, but its nonce is bound to another job: the
 * receiver's binding, never `checkRecipientTag`'s answer).
 */
export type RecipientTagCause = (typeof CAUSES)['recipientTag'][number];
