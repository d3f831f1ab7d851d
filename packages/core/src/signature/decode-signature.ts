import type { HeaderCause } from '../causes.js';
import { JobhookError, type ErrorCode } from '../errors.js';
import type { HeaderValue } from '../http/request-headers.js';
import type { KeyRing } from '../keys/key-ring.js';
import { HASH_ALGORITHM, type WebhookHeaderNames } from './headers.js';

/**
 * The error code the receiver and `constructEvent` refuse each header cause with (all 401). They
 * differ in one place, on purpose: `unknown-key` here is a well-formed hex signature of a size no
 * configured key makes (a key of another size signed it); the receiver refuses it as
 * `ERR_SIGNATURE_MALFORMED` without an RSA operation, and its log line says both (`code`, `cause`).
 * @internal
 */
export const HEADER_CAUSE_CODE: Readonly<Record<HeaderCause, ErrorCode>> = Object.freeze({
  'hash-algorithm': 'ERR_HASH_ALGORITHM_UNSUPPORTED',
  'signature-missing': 'ERR_SIGNATURE_MISSING',
  'signature-elsewhere': 'ERR_SIGNATURE_MISSING',
  'signature-malformed': 'ERR_SIGNATURE_MALFORMED',
  'unknown-key': 'ERR_SIGNATURE_MALFORMED',
});

/** Why the signature headers refuse a request: the cause, a message naming the headers, and what names it. @internal */
export interface HeaderRefusal {
  readonly cause: HeaderCause;
  readonly message: string;
  /** What the log line and the diagnosis report of it: `header`, `shape`, `keyIdsTried`, ... */
  readonly detail: Readonly<Record<string, unknown>>;
}

/** How messages name the signature and hash-algorithm headers. @internal */
export type SignatureNames = Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm'>;

/** Names for a signature given as a value rather than in request headers (`verifier.verify`). */
const VALUE_NAMES: SignatureNames = Object.freeze({ signature: 'the signature', hashAlgorithm: 'the hash algorithm' });

/** Bytes of a signature made by a key of `bits` bits (the modulus length). @internal */
export function signatureBytes(bits: number): number {
  return (bits + 7) >> 3;
}

/** True when a key of the ring makes signatures of `bytes` bytes: a loop over a key or two, nothing allocated. @internal */
export function isKeySized(keyRing: KeyRing, bytes: number): boolean {
  const { keys } = keyRing;
  for (let i = 0; i < keys.length; i++) {
    if (signatureBytes(keys[i]!.bits) === bytes) return true;
  }
  return false;
}

/** `512 or 768`: how many hex digits a signature of the ring's keys has, for messages. @internal */
export function keyHexDigits(keyRing: KeyRing): string {
  return [...new Set(keyRing.keys.map((k) => signatureBytes(k.bits) * 2))].join(' or ');
}

/** The signature's values: none when it was not sent, several when it was sent more than once. @internal */
export function signatureValues(signature: HeaderValue | null): readonly string[] {
  return signature === undefined || signature === null ? [] : typeof signature === 'string' ? [signature] : signature;
}

/** The signature's value when it was sent once; undefined when absent or repeated. @internal */
export function singleValue(signature: HeaderValue | null): string | undefined {
  return typeof signature === 'string' ? signature : signature?.length === 1 ? signature[0] : undefined;
}

/** True when a sent hash-algorithm value names SHA256 (either case, surrounding whitespace ignored). */
const namesSha256 = (hashAlgorithm: string): boolean =>
  hashAlgorithm === HASH_ALGORITHM || hashAlgorithm.trim().toUpperCase() === HASH_ALGORITHM;

/**
 * The one signature decode, for the receiver, `constructEvent`, `verifier.verify` and the diagnosis
 * alike: the signature's bytes when the hash-algorithm value, if sent, names SHA256 and the signature
 * is sent once, hex (either case, surrounding whitespace ignored) as long as a signature of one of the
 * ring's keys; undefined otherwise. Checked by decoding and comparing lengths (Buffer stops at the
 * first pair that is not hex), so a good signature costs one decode and allocates nothing else, and a
 * truncated or padded one costs no RSA operation. Why a refused one is wrong is not worked out here:
 * {@link headerCause} names its code, the diagnosis (`diagnosis/signature-findings.ts`) its cause.
 *
 * @param signature the signature header's value(s), as read once by the caller.
 * @param hashAlgorithm the hash-algorithm header's first value (`undefined`: not sent).
 * @internal
 */
export function decodeSignature(signature: HeaderValue | null, keyRing: KeyRing, hashAlgorithm?: string): Buffer | undefined {
  if (hashAlgorithm !== undefined && !namesSha256(hashAlgorithm)) return undefined;
  const only = singleValue(signature);
  if (only === undefined) return undefined;
  const text = only.trim();
  if ((text.length & 1) !== 0 || !isKeySized(keyRing, text.length >>> 1)) return undefined;
  const bytes = Buffer.from(text, 'hex');
  return bytes.length * 2 === text.length ? bytes : undefined;
}

/** The causes the headers name without asking why: what {@link headerCause} tells. @internal */
export type PlainHeaderCause = Extract<HeaderCause, 'hash-algorithm' | 'signature-missing' | 'signature-malformed'>;

/**
 * What {@link decodeSignature} refused, named without asking why, in its order: a hash algorithm
 * other than SHA256; no signature, or a blank one (`signature-missing`); anything else
 * (`signature-malformed`: sent more than once, or one value that is not hex as long as a configured
 * key's signature). Whether another header holds a missing signature, and how a value is malformed,
 * is the diagnosis's to tell (`diagnosis/signature-findings.ts`).
 * @internal
 */
export function headerCause(signature: HeaderValue | null, hashAlgorithm: string | undefined): PlainHeaderCause {
  if (hashAlgorithm !== undefined && !namesSha256(hashAlgorithm)) return 'hash-algorithm';
  const values = signatureValues(signature);
  return values.length === 0 || (values.length === 1 && values[0]!.trim() === '') ? 'signature-missing' : 'signature-malformed';
}

/**
 * {@link headerCause} with its message and detail, as a signature given as a value
 * (`verifier.verify`) or the hash-algorithm header and a repeated signature header are refused.
 * @internal
 */
export function headerRefusal(
  signature: HeaderValue | null,
  keyRing: KeyRing,
  hashAlgorithm: string | undefined,
  names: SignatureNames,
): HeaderRefusal {
  const cause = headerCause(signature, hashAlgorithm);
  if (cause === 'hash-algorithm') {
    const value = hashAlgorithm!.slice(0, 64);
    return {
      cause,
      message: `${names.hashAlgorithm} says ${JSON.stringify(value)}; the service signs with ${HASH_ALGORITHM} only`,
      detail: { header: names.hashAlgorithm, value },
    };
  }
  const values = signatureValues(signature);
  if (cause === 'signature-missing') {
    const message = values.length === 0 ? 'no signature was sent' : `${names.signature} is empty`;
    return { cause, message, detail: { expected: names.signature } };
  }
  if (values.length > 1) {
    return {
      cause,
      message: `${names.signature} was sent ${values.length} times; a delivery carries one signature`,
      detail: { shape: 'repeated', header: names.signature },
    };
  }
  return {
    cause,
    message: `${names.signature} has ${values[0]!.trim().length} characters; a signature of the configured keys is ${keyHexDigits(keyRing)} hex digits`,
    detail: { header: names.signature },
  };
}

/**
 * A signature given as a value (`verifier.verify`), decoded, or its refusal thrown with the message
 * {@link headerRefusal} gives it.
 * @throws JobhookError `ERR_SIGNATURE_MISSING` (absent or blank), `ERR_SIGNATURE_MALFORMED` (sent
 * twice, not hex, or not as long as a signature of a configured key) (all 401).
 * @internal
 */
export function readSignature(signature: HeaderValue | null, keyRing: KeyRing): Buffer {
  const decoded = decodeSignature(signature, keyRing);
  if (decoded !== undefined) return decoded;
  throw signatureRefusal(headerRefusal(signature, keyRing, undefined, VALUE_NAMES));
}

/**
 * The refusal the receiver's head stage throws for each {@link PlainHeaderCause}: its code and a
 * plain message, made once, as an Error costs microseconds to make and anyone can send a request
 * without a signature. The receiver's refusal hook (`diagnosis/explain-refusal.ts`) answers with one
 * of the same code whose message says why; frozen, as the same object serves every request.
 */
const HEAD_REFUSALS: Readonly<Record<PlainHeaderCause, JobhookError>> = Object.freeze({
  'hash-algorithm': Object.freeze(new JobhookError('ERR_HASH_ALGORITHM_UNSUPPORTED', `the hash algorithm is not ${HASH_ALGORITHM}`)),
  'signature-missing': Object.freeze(new JobhookError('ERR_SIGNATURE_MISSING', 'no signature was sent')),
  'signature-malformed': Object.freeze(
    new JobhookError('ERR_SIGNATURE_MALFORMED', 'the signature is not hex as long as a signature of a configured key'),
  ),
});

/**
 * The signature headers' values as the receiver's head stage read them, decoded, or the refusal of
 * their cause's code thrown ({@link HEAD_REFUSALS}), which the receiver's refusal hook explains.
 * @throws JobhookError `ERR_HASH_ALGORITHM_UNSUPPORTED`, `ERR_SIGNATURE_MISSING`, `ERR_SIGNATURE_MALFORMED` (all 401).
 * @internal
 */
export function readHeadSignature(signature: HeaderValue | null, keyRing: KeyRing, hashAlgorithm: string | undefined): Buffer {
  const decoded = decodeSignature(signature, keyRing, hashAlgorithm);
  if (decoded !== undefined) return decoded;
  throw HEAD_REFUSALS[headerCause(signature, hashAlgorithm)];
}

/**
 * A header refusal as the error thrown and answered: its cause mapped to an error code by
 * {@link HEADER_CAUSE_CODE}, `detail.cause` keeping the cause for the receiver's log line (the answer
 * body carries only code and message).
 * @internal
 */
export function signatureRefusal(refusal: HeaderRefusal): JobhookError {
  return new JobhookError(HEADER_CAUSE_CODE[refusal.cause], refusal.message, { detail: { cause: refusal.cause, ...refusal.detail } });
}
