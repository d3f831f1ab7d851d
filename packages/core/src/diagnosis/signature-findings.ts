import type { SignatureShape } from '../causes.js';
import { listHeaders } from '../http/header-list.js';
import { firstValue, readHeaders, type RequestHeaders } from '../http/request-headers.js';
import type { KeyRing } from '../keys/key-ring.js';
import {
  decodeSignature,
  headerCause,
  headerRefusal,
  isKeySized,
  keyHexDigits,
  signatureBytes,
  signatureValues,
  singleValue,
  type HeaderRefusal,
  type SignatureNames,
} from '../signature/decode-signature.js';
import type { WebhookHeaderNames } from '../signature/headers.js';

/** A refusal of the signature headers, explained: why, and where the signature is when it was sent in another place or dress. @internal */
export interface SignatureRefusal extends HeaderRefusal {
  readonly ok: false;
  /** The signature as hex, when the value is one in another place or dress (renamed header, prefix, base64, ...). */
  readonly recovered?: string;
}

/** What the signature headers tell: the decoded signature, or why they refuse the request. @internal */
export type SignatureFinding = { readonly ok: true; readonly signature: Buffer } | SignatureRefusal;

/** RSA modulus sizes in use (2048 to 8192 bits), in bytes: a hex value of one of these is a signature by a key of that size. */
const RSA_SIGNATURE_BYTES: ReadonlySet<number> = new Set([256, 384, 512, 768, 1024]);
/** Longest value looked at: an RSA-16384 signature in base64 or hex with a prefix; anything longer is not a signature. */
const MAX_VALUE_CHARS = 4200;
const HEX = /^[0-9a-f]+$/i;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** `sha256=…`, `sha1=…`, `v1,…`, `rsa-sha256:…`: how other providers label their signatures. */
const LABEL = /^([a-z][a-z0-9-]{0,15})[=:,]\s*/i;
const SEPARATORS = /[\s:,.-]+/g;

/**
 * The signature headers of a request, decoded by the one decoder, or why they refuse it, worked out
 * only then (string work on the header values, no RSA, nothing of the body), in the decoder's order:
 * the hash algorithm; a missing or blank signature (`signature-elsewhere` when another header holds
 * a value shaped like a signature of a configured key); a repeated one; then how a single value is
 * malformed ({@link SignatureShape}), or `unknown-key` for well-formed hex of an RSA size no
 * configured key has. For the diagnosis and the receiver's refusal hook (`explainRefusal`).
 * @internal
 */
export function findSignature(headers: RequestHeaders, names: WebhookHeaderNames, keyRing: KeyRing): SignatureFinding {
  const [hashValue, signature] = readHeaders(headers, [names.hashAlgorithm.toLowerCase(), names.signature.toLowerCase()]);
  const hashAlgorithm = firstValue(hashValue);
  const decoded = decodeSignature(signature, keyRing, hashAlgorithm);
  if (decoded !== undefined) return { ok: true, signature: decoded };
  const cause = headerCause(signature, hashAlgorithm);
  if (cause === 'signature-missing') return missingSignature(signatureValues(signature).length === 0, headers, names, keyRing);
  const only = singleValue(signature);
  if (cause === 'signature-malformed' && only !== undefined) return whyMalformed(only.trim(), keyRing, names);
  // A hash algorithm other than SHA256, or a repeated signature header: the headers alone say all.
  return { ok: false, ...headerRefusal(signature, keyRing, hashAlgorithm, names) };
}

/** No signature, or a blank one: another header may hold it (a proxy renamed it). */
function missingSignature(absent: boolean, headers: RequestHeaders, names: WebhookHeaderNames, keyRing: KeyRing): SignatureRefusal {
  const elsewhere = findSignatureElsewhere(headers, names, keyRing);
  if (elsewhere !== undefined) {
    return {
      ok: false,
      cause: 'signature-elsewhere',
      message: `no ${names.signature} header, but ${elsewhere.name} holds a value shaped like a signature: a proxy renamed the header, or the signature is read from the wrong one`,
      detail: { header: elsewhere.name, expected: names.signature },
      recovered: elsewhere.hex,
    };
  }
  const message = `${absent ? `the request has no ${names.signature} header` : `${names.signature} is empty`}, and no other header holds a signature`;
  return { ok: false, cause: 'signature-missing', message, detail: { expected: names.signature } };
}

/** Why a single signature value did not decode: its {@link SignatureShape}, or `unknown-key`. */
function whyMalformed(text: string, keyRing: KeyRing, names: SignatureNames): SignatureRefusal {
  const expected = keyHexDigits(keyRing);
  if (text.length > MAX_VALUE_CHARS) {
    return malformed(
      'too-long',
      `${names.signature} has ${text.length} characters; a signature of the configured keys has ${expected} hex digits`,
      names,
    );
  }
  if (HEX.test(text)) {
    // Hex as long as a configured key's signature decodes: this one is of another length.
    const bytes = text.length / 2;
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
      return {
        ok: false,
        cause: 'unknown-key',
        message: `the signature was made by a ${bytes * 8}-bit key; the configured keys are ${[...new Set(keyRing.keys.map((k) => k.bits))].join(', ')}-bit`,
        detail: { keyIdsTried: keyRing.keys.map((k) => k.id), signatureBits: bytes * 8 },
      };
    }
    const shorter = keyRing.keys.every((k) => bytes < signatureBytes(k.bits));
    return malformed(
      shorter ? 'truncated' : 'too-long',
      `${names.signature} has ${text.length} hex digits; the configured keys make ${expected}${shorter ? ' (cut short on the way?)' : ''}`,
      names,
    );
  }
  const label = LABEL.exec(text);
  const unlabelled = label === null ? '' : text.slice(label[0].length).trim();
  if (label !== null && isKeySizedHex(unlabelled, keyRing)) {
    return malformed(
      'prefixed',
      `${names.signature} starts with "${label[0].trim()}"; the service sends the hex alone (the rest is a well-formed signature)`,
      names,
      unlabelled,
    );
  }
  const unquoted = text.replace(/^["']|["']$/g, '');
  if (unquoted !== text && isKeySizedHex(unquoted, keyRing)) {
    return malformed('quoted', `${names.signature} is wrapped in quotes; the hex inside is a well-formed signature`, names, unquoted);
  }
  const joined = text.replace(SEPARATORS, '');
  if (joined !== text && isKeySizedHex(joined, keyRing)) {
    return malformed('separators', `${names.signature} has separators (spaces, colons, dashes) between its hex digits`, names, joined);
  }
  const decoded = BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (decoded !== undefined && isKeySized(keyRing, decoded.length)) {
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

/** True when `text` is hex as long as a signature of one of the ring's keys. */
function isKeySizedHex(text: string, keyRing: KeyRing): boolean {
  return HEX.test(text) && text.length % 2 === 0 && isKeySized(keyRing, text.length / 2);
}

function malformed(shape: SignatureShape, message: string, names: SignatureNames, recovered?: string): SignatureRefusal {
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
  names: WebhookHeaderNames,
  keyRing: KeyRing,
): { name: string; hex: string } | undefined {
  const own = new Set([names.signature, names.hashAlgorithm, names.webhook].map((n) => n.toLowerCase()));
  for (const [name, value] of listHeaders(headers)) {
    if (own.has(name)) continue;
    const first = (typeof value === 'string' ? value : (value[0] ?? '')).trim();
    if (first.length < 64 || first.length > MAX_VALUE_CHARS) continue;
    const hex = signatureIn(first, keyRing);
    if (hex !== undefined) return { name, hex };
  }
  return undefined;
}

/**
 * The signature a header value holds as hex, bare, labelled (`sha256=`), quoted or in base64, when
 * it is as long as a signature of a configured key; undefined otherwise. What `captureFailures` keeps
 * of headers it does not know, so the diagnosis still finds a renamed one.
 * @internal
 */
export function keySizedSignatureIn(value: string, keyRing: KeyRing): string | undefined {
  const text = value.trim();
  if (text.length < 64 || text.length > MAX_VALUE_CHARS) return undefined;
  const hex = signatureIn(text, keyRing);
  return hex !== undefined && isKeySized(keyRing, hex.length / 2) ? hex : undefined;
}

/** The signature (hex) a value holds, bare, labelled, quoted or in base64; undefined when it holds none. */
function signatureIn(value: string, keyRing: KeyRing): string | undefined {
  const label = LABEL.exec(value);
  const bare = (label === null ? value : value.slice(label[0].length)).trim().replace(/^["']|["']$/g, '');
  if (HEX.test(bare)) {
    return bare.length % 2 === 0 && (isKeySized(keyRing, bare.length / 2) || RSA_SIGNATURE_BYTES.has(bare.length / 2)) ? bare : undefined;
  }
  const decoded = BASE64.test(bare) ? Buffer.from(bare, 'base64') : undefined;
  return decoded !== undefined && isKeySized(keyRing, decoded.length) ? decoded.toString('hex') : undefined;
}
