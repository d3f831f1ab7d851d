import type { HeaderCause, SignatureShape } from '../causes.js';
import type { KeyRing } from '../keys/key-ring.js';
import { firstValue, readHeaders, type HeaderValue, type RequestHeaders } from '../http/request-headers.js';
import { listHeaders } from '../http/header-list.js';
import type { ErrorCode } from '../errors.js';
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

/** What the headers alone tell: the decoded signature, or a header cause. @internal */
export type HeaderFinding =
  | { readonly ok: true; readonly signature: Buffer }
  | {
      readonly ok: false;
      readonly cause: HeaderCause;
      readonly message: string;
      readonly detail: Readonly<Record<string, unknown>>;
      /** The signature as hex, when the value is one in another place or dress (renamed header, prefix, base64, ...). */
      readonly recovered?: string;
    };

/** RSA modulus sizes in use (2048 to 8192 bits), in bytes: a hex value of one of these is a signature by a key of that size. */
const RSA_SIGNATURE_BYTES: ReadonlySet<number> = new Set([256, 384, 512, 768, 1024]);
/** Longest value looked at: an RSA-16384 signature in base64 or hex with a prefix; anything longer is not a signature. */
const MAX_VALUE_CHARS = 4200;
const HEX = /^[0-9a-f]+$/i;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** `sha256=…`, `sha1=…`, `v1,…`, `rsa-sha256:…`: how other providers label their signatures. */
const LABEL = /^([a-z][a-z0-9-]{0,15})[=:,]\s*/i;
const SEPARATORS = /[\s:,.-]+/g;

const bytesOf = (bits: number): number => (bits + 7) >> 3;

/** What a ring's signatures look like: their byte lengths, and how a message names them. */
interface RingShape {
  readonly keyBytes: ReadonlySet<number>;
  /** `512 or 768`: the hex digits a signature of the ring's keys has. */
  readonly expected: string;
}

/** A cache, per key ring (rings never change): worked out on a ring's first signature, not on each. */
// Module-wide but keyed weakly by ring, so it is per-instance in effect and dies with its ring.
const ringShapes = new WeakMap<KeyRing, RingShape>();

function shapeOf(keyRing: KeyRing): RingShape {
  let shape = ringShapes.get(keyRing);
  if (shape === undefined) {
    const keyBytes = new Set(keyRing.keys.map((k) => bytesOf(k.bits)));
    shape = { keyBytes, expected: [...keyBytes].map((b) => b * 2).join(' or ') };
    ringShapes.set(keyRing, shape);
  }
  return shape;
}

/**
 * The signature as bytes when `text` is hex (either case) as long as a signature of one of the ring's
 * keys: checked by decoding and comparing lengths (Buffer stops at the first pair that is not hex).
 */
function decodeHex(text: string, keyBytes: ReadonlySet<number>): Buffer | undefined {
  if ((text.length & 1) !== 0 || !keyBytes.has(text.length >>> 1)) return undefined;
  const bytes = Buffer.from(text, 'hex');
  return bytes.length * 2 === text.length ? bytes : undefined;
}

/** Names for a signature given as a value rather than in request headers (`verifier.verify`). */
const VALUE_NAMES: Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm' | 'webhook'> = Object.freeze({
  signature: 'the signature',
  hashAlgorithm: '',
  webhook: '',
});

/**
 * The one signature decoder, for the receiver, `constructEvent`, `verifier.verify` and the diagnosis
 * alike (the receiver maps a finding to its error code, {@link HEADER_CAUSE_CODE}; the diagnosis
 * reports the cause). Bounded work: string work on the values, no RSA, nothing of the body. In the
 * receiver's order: the hash-algorithm value, when sent, names SHA256 (either case); the signature is
 * there and not blank (when it is not and `headers` are given, another header holding a value
 * shaped like a signature is `signature-elsewhere`); sent once; hex (either case, surrounding
 * whitespace ignored) as long as a signature of one of the ring's keys, so a truncated or padded one
 * costs no RSA operation. A well-formed signature of an RSA size no configured key has is
 * `unknown-key`. A good signature costs one decode; the rest is worked out only for a refusal.
 *
 * @param hashAlgorithm the hash-algorithm header's first value (`undefined`: not sent).
 * @param signature the signature header's value(s), as read once by the caller.
 * @param names how messages name the headers.
 * @param headers all request headers, searched for a renamed signature only when it is missing.
 * @internal
 */
export function classifySignature(
  hashAlgorithm: string | undefined,
  signature: HeaderValue | null,
  keyRing: KeyRing,
  names: Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm' | 'webhook'> = VALUE_NAMES,
  headers?: RequestHeaders,
): HeaderFinding {
  if (hashAlgorithm !== undefined && hashAlgorithm !== HASH_ALGORITHM && hashAlgorithm.trim().toUpperCase() !== HASH_ALGORITHM) {
    return {
      ok: false,
      cause: 'hash-algorithm',
      message: `${names.hashAlgorithm} says ${JSON.stringify(hashAlgorithm.slice(0, 64))}; the service signs with ${HASH_ALGORITHM} only`,
      detail: { header: names.hashAlgorithm, value: hashAlgorithm.slice(0, 64) },
    };
  }
  const { keyBytes } = shapeOf(keyRing);
  const only = typeof signature === 'string' ? signature : signature?.length === 1 ? signature[0] : undefined;
  if (only !== undefined) {
    const decoded = decodeHex(only.trim(), keyBytes);
    if (decoded !== undefined) return { ok: true, signature: decoded };
  }
  const values: readonly string[] =
    signature === undefined || signature === null ? [] : typeof signature === 'string' ? [signature] : signature;
  const blank = values.length === 0 || (values.length === 1 && values[0]!.trim() === '');
  if (blank) {
    const elsewhere = headers === undefined ? undefined : findSignatureElsewhere(headers, names, keyBytes);
    if (elsewhere !== undefined) {
      return {
        ok: false,
        cause: 'signature-elsewhere',
        message: `no ${names.signature} header, but ${elsewhere.name} holds a value shaped like a signature: a proxy renamed the header, or the signature is read from the wrong one`,
        detail: { header: elsewhere.name, expected: names.signature },
        recovered: elsewhere.hex,
      };
    }
    const message =
      headers === undefined
        ? values.length === 0
          ? 'no signature was sent'
          : 'the signature is empty'
        : `${values.length === 0 ? `the request has no ${names.signature} header` : `${names.signature} is empty`}, and no other header holds a signature`;
    return { ok: false, cause: 'signature-missing', message, detail: { expected: names.signature } };
  }
  if (values.length > 1) {
    return malformed('repeated', `${names.signature} was sent ${values.length} times; a delivery carries one signature`, names);
  }
  return classifyValue(values[0]!.trim(), keyRing, names);
}

/**
 * {@link classifySignature} over request headers: reads the hash-algorithm and signature headers
 * (for the diagnosis and `constructEvent`; the receiver reads them with the rest of its head).
 * @internal
 */
export function checkSignatureHeaders(
  headers: RequestHeaders,
  names: Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm' | 'webhook'>,
  keyRing: KeyRing,
): HeaderFinding {
  const [hashAlgorithm, signature] = readHeaders(headers, [names.hashAlgorithm.toLowerCase(), names.signature.toLowerCase()]);
  return classifySignature(firstValue(hashAlgorithm), signature, keyRing, names, headers);
}

/** Why a single signature value did not decode (the slow path: refusals only). */
function classifyValue(text: string, keyRing: KeyRing, names: Pick<WebhookHeaderNames, 'signature'>): HeaderFinding {
  const { keyBytes, expected } = shapeOf(keyRing);
  if (text.length > MAX_VALUE_CHARS) {
    return malformed(
      'too-long',
      `${names.signature} has ${text.length} characters; a signature of the configured keys has ${expected} hex digits`,
      names,
    );
  }
  if (HEX.test(text)) {
    const bytes = text.length / 2;
    if (text.length % 2 === 0 && keyBytes.has(bytes)) return { ok: true, signature: Buffer.from(text, 'hex') };
    if (text.length === 64) {
      return malformed(
        'digest',
        `${names.signature} holds 64 hex digits: a SHA-256 digest (an HMAC?), not the RSA signature (${expected} hex digits)`,
        names,
      );
    }
    if (text.length % 2 !== 0) {
      return malformed(
        'odd-length',
        `${names.signature} has an odd number of hex digits (${text.length}); the configured keys make ${expected}`,
        names,
      );
    }
    if (RSA_SIGNATURE_BYTES.has(bytes)) {
      const tried = keyRing.keys.map((k) => ({ keyId: k.id, bits: k.bits }));
      return {
        ok: false,
        cause: 'unknown-key',
        message: `the signature was made by a ${bytes * 8}-bit key; the configured keys are ${[...new Set(keyRing.keys.map((k) => k.bits))].join(', ')}-bit`,
        detail: { keyIdsTried: tried.map((t) => t.keyId), signatureBits: bytes * 8 },
      };
    }
    const shorter = [...keyBytes].every((b) => bytes < b);
    return malformed(
      shorter ? 'truncated' : 'too-long',
      `${names.signature} has ${text.length} hex digits; the configured keys make ${expected}${shorter ? ' (cut short on the way?)' : ''}`,
      names,
    );
  }
  const usable = (candidate: string): boolean => HEX.test(candidate) && candidate.length % 2 === 0 && keyBytes.has(candidate.length / 2);
  const label = LABEL.exec(text);
  const unlabelled = label === null ? '' : text.slice(label[0].length).trim();
  if (label !== null && usable(unlabelled)) {
    return malformed(
      'prefixed',
      `${names.signature} starts with "${label[0].trim()}"; the service sends the hex alone (the rest is a well-formed signature)`,
      names,
      unlabelled,
    );
  }
  const unquoted = text.replace(/^["']|["']$/g, '');
  if (unquoted !== text && usable(unquoted)) {
    return malformed('quoted', `${names.signature} is wrapped in quotes; the hex inside is a well-formed signature`, names, unquoted);
  }
  const joined = text.replace(SEPARATORS, '');
  if (joined !== text && usable(joined)) {
    return malformed('separators', `${names.signature} has separators (spaces, colons, dashes) between its hex digits`, names, joined);
  }
  const decoded = BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (decoded !== undefined && keyBytes.has(decoded.length)) {
    return malformed(
      'base64',
      `${names.signature} is base64 of a signature; the service sends hex (${expected} digits)`,
      names,
      decoded.toString('hex'),
    );
  }
  return malformed(
    'not-hex',
    `${names.signature} is not hex (${text.length} characters); the configured keys make ${expected} hex digits`,
    names,
  );
}

function malformed(
  shape: SignatureShape,
  message: string,
  names: Pick<WebhookHeaderNames, 'signature'>,
  recovered?: string,
): HeaderFinding {
  return {
    ok: false,
    cause: 'signature-malformed',
    message,
    detail: { shape, header: names.signature },
    ...(recovered === undefined ? {} : { recovered }),
  };
}

/**
 * The first other header whose value is shaped like a signature of a configured key's size: hex,
 * optionally labelled (`sha256=`) or quoted, or base64. The name is given in lower case.
 */
function findSignatureElsewhere(
  headers: RequestHeaders,
  names: Pick<WebhookHeaderNames, 'signature' | 'hashAlgorithm' | 'webhook'>,
  keyBytes: ReadonlySet<number>,
): { name: string; hex: string } | undefined {
  const own = new Set([names.signature, names.hashAlgorithm, names.webhook].map((n) => n.toLowerCase()));
  for (const [name, value] of listHeaders(headers)) {
    if (own.has(name)) continue;
    const first = (typeof value === 'string' ? value : (value[0] ?? '')).trim();
    if (first.length < 64 || first.length > MAX_VALUE_CHARS) continue;
    const hex = signatureIn(first, keyBytes);
    if (hex !== undefined) return { name, hex };
  }
  return undefined;
}

/**
 * The signature a header value holds as hex, bare, labelled (`sha256=`), quoted or in base64, when
 * it is as long as a signature of a configured key (`keyBytes`); undefined otherwise. What
 * `captureFailures` keeps of headers it does not know, so the diagnosis still finds a renamed one.
 * @internal
 */
export function keySizedSignatureIn(value: string, keyBytes: ReadonlySet<number>): string | undefined {
  const text = value.trim();
  if (text.length < 64 || text.length > MAX_VALUE_CHARS) return undefined;
  const hex = signatureIn(text, keyBytes);
  return hex !== undefined && keyBytes.has(hex.length / 2) ? hex : undefined;
}

/** The signature (hex) a value holds, bare, labelled, quoted or in base64; undefined when it holds none. */
function signatureIn(value: string, keyBytes: ReadonlySet<number>): string | undefined {
  const label = LABEL.exec(value);
  const bare = (label === null ? value : value.slice(label[0].length)).trim().replace(/^["']|["']$/g, '');
  if (HEX.test(bare)) {
    return bare.length % 2 === 0 && (keyBytes.has(bare.length / 2) || RSA_SIGNATURE_BYTES.has(bare.length / 2)) ? bare : undefined;
  }
  const decoded = BASE64.test(bare) ? Buffer.from(bare, 'base64') : undefined;
  return decoded !== undefined && keyBytes.has(decoded.length) ? decoded.toString('hex') : undefined;
}
