import { generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { optionError } from '../internal/option-checks.js';
import { TRUSTED_INPUT, parseBodyUnchecked } from '../canonical/parse.js';
import { PYTHON_DEFAULT_DUMPS, serializeTape } from '../canonical/serialize-tape.js';
import { toLosslessValue, type LosslessJsonValue } from '../canonical/to-value.js';
import { rawJson, valueToJson } from '../canonical/value-json.js';
import type { DiagnosisCause } from '../causes.js';
import { decodeSingle, singleBytes } from '../diagnosis/transcoding.js';
import { DEFAULT_HEADER_NAMES, type WebhookHeaderNames } from '../signature/headers.js';
import { loadPrivateKey, signPayload, type PrivateKeyInput } from '../signature/sign.js';
import type { BodyStyle } from '../signature/signature-option-checks.js';

/** A way a delivery can fail: every diagnosis cause but `verified`. */
export type BreakCause = Exclude<DiagnosisCause, 'verified'>;

/**
 * The variants {@link breakDelivery} makes of each cause, by name, in `variant` order: how real
 * deployments break deliveries (a proxy renaming the header, a `sha256=` prefix, a key rotation,
 * a JSON body parser, mojibake, ...).
 */
export const BREAK_VARIANTS: Readonly<Record<BreakCause, readonly string[]>> = Object.freeze({
  'signature-missing': ['removed', 'removed-with-hash-header', 'only-content-type-left', 'empty'],
  'signature-elsewhere': [
    'x-signature',
    'x-hub-signature-256',
    'x-webhook-signature',
    'signature',
    'x-original-signature',
    'x-signature-base64',
  ],
  'signature-malformed': ['sha256-prefix', 'base64', 'truncated', 'odd-length', 'colons', 'spaces', 'digest', 'quoted', 'not-hex'],
  'hash-algorithm': ['SHA1', 'SHA512', 'MD5', 'SHA384', 'HMAC-SHA256'],
  'unknown-key': ['other-key', 'second-other-key', 'other-size-key', 'random-bytes'],
  'body-malformed': ['truncated', 'html-error-page', 'empty', 'not-utf8', 'trailing-garbage', 'form-encoded', 'top-level-array'],
  'body-reserialized': [
    'float-1.0',
    'big-integer',
    'float-1e16',
    'integer-keys',
    'float-array',
    'negative-float',
    'stringify-indent-2',
    'stringify-tab-newline',
  ],
  'body-transcoded': [
    'latin1-mojibake',
    'cp1252-mojibake',
    'double-mojibake',
    'nfd',
    'nfc',
    'reencoded-latin1',
    'reencoded-cp1252',
    'nfd-then-redumped',
    'mojibake-then-redumped',
    'mojibake-then-nfd',
  ],
  'body-modified': ['job-id-changed', 'status-changed', 'field-added', 'field-removed', 'string-edited', 'finished-at-edited'],
});

/** Options of {@link breakDelivery}. */
export interface BreakOptions {
  /** The key the intact delivery is signed with (the one the receiver trusts). */
  privateKey: PrivateKeyInput;
  /** Which variant of the cause (see {@link BREAK_VARIANTS}), taken modulo their number. Default 0. */
  variant?: number;
  /** Layout of the intact body. Default `python` (as the service sends). Mojibake and normalization need raw UTF-8, so `body-transcoded` uses `compact` for `python`. */
  bodyStyle?: BodyStyle;
  /** Header names. Default the spec's. */
  headerNames?: Partial<WebhookHeaderNames>;
}

/** A delivery broken in one way, ready to POST. */
export interface BrokenDelivery {
  body: Buffer;
  /** `Content-Type` and the service headers, as broken. */
  headers: Record<string, string>;
  cause: BreakCause;
  /** The variant's name, from {@link BREAK_VARIANTS}. */
  variant: string;
}

const otherKeys = new Map<string, KeyObject>();

/** Throwaway signing keys the receiver does not know, made once per process. */
function otherKey(name: string, bits: number): KeyObject {
  let key = otherKeys.get(name);
  if (key === undefined) {
    key = generateKeyPairSync('rsa', { modulusLength: bits }).privateKey;
    otherKeys.set(name, key);
  }
  return key;
}

/** Text that mojibake and Unicode normalization change: accents (composed), curly quotes, the euro sign. */
const NON_ASCII_NOTE = 'Café “crème” – 5 €, naïve’s';
/** The same in Latin-1 only, for a body re-encoded in Latin-1. */
const LATIN1_NOTE = 'Café crème, naïve, Straße, ½';

/**
 * Signs `event` with `options.privateKey`, then breaks the delivery in the way `cause` names, so a
 * receiver's logs and `jobhook doctor` can be seen answering each kind of failure (`jobhook send
 * --break`). Causes that need content to break add it under `user_parameters.jobhook_break` before
 * signing: floats and big integers (re-serialization), non-ASCII text (transcoding).
 *
 * @example
 * ```ts
 * const { body, headers } = breakDelivery(buildTestEvent(), 'body-reserialized', { privateKey });
 * await fetch(url, { method: 'POST', body, headers });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` for an unknown cause.
 */
export function breakDelivery(event: object, cause: BreakCause, options: BreakOptions): BrokenDelivery {
  const variants = BREAK_VARIANTS[cause];
  if (variants === undefined) {
    throw optionError('breakDelivery', `unknown cause ${JSON.stringify(cause)}; expected one of ${Object.keys(BREAK_VARIANTS).join(', ')}`);
  }
  const index = Math.abs(Math.trunc(options.variant ?? 0)) % variants.length;
  const variant = variants[index]!;
  const names = { ...DEFAULT_HEADER_NAMES, ...options.headerNames };
  const bodyStyle = options.bodyStyle ?? 'python';
  const sign = (payload: unknown, style: BodyStyle = bodyStyle, key: PrivateKeyInput = options.privateKey) =>
    signPayload(payload, key, { bodyStyle: style, headerNames: names });
  const done = (body: Buffer, headers: Record<string, string>): BrokenDelivery => ({ body, headers, cause, variant });

  switch (cause) {
    case 'signature-missing': {
      const { body, headers } = sign(event);
      delete headers[names.signature];
      if (variant === 'empty') return done(body, { ...headers, [names.signature]: '' });
      if (variant !== 'removed') delete headers[names.hashAlgorithm];
      if (variant === 'only-content-type-left') delete headers[names.webhook];
      return done(body, headers);
    }
    case 'signature-elsewhere': {
      const { body, headers, signature } = sign(event);
      delete headers[names.signature];
      const moved: Record<string, [string, string]> = {
        'x-signature': ['X-Signature', signature],
        'x-hub-signature-256': ['X-Hub-Signature-256', `sha256=${signature}`],
        'x-webhook-signature': ['X-Webhook-Signature', signature],
        signature: ['Signature', signature],
        'x-original-signature': [`X-Original-${names.signature}`, signature],
        'x-signature-base64': ['X-Signature', Buffer.from(signature, 'hex').toString('base64')],
      };
      const [name, value] = moved[variant]!;
      return done(body, { ...headers, [name]: value });
    }
    case 'signature-malformed': {
      const { body, headers, signature, digest } = sign(event);
      const mangled: Record<string, string> = {
        'sha256-prefix': `sha256=${signature}`,
        base64: Buffer.from(signature, 'hex').toString('base64'),
        truncated: signature.slice(0, -8),
        'odd-length': signature.slice(0, -1),
        colons: signature.match(/../g)!.join(':'),
        spaces: signature.match(/.{1,64}/g)!.join(' '),
        digest,
        quoted: `"${signature}"`,
        'not-hex': `${signature.slice(0, -2)}zz`,
      };
      return done(body, { ...headers, [names.signature]: mangled[variant]! });
    }
    case 'hash-algorithm': {
      const { body, headers } = sign(event);
      return done(body, { ...headers, [names.hashAlgorithm]: variant });
    }
    case 'unknown-key': {
      if (variant === 'random-bytes') {
        const { body, headers, signature } = sign(event);
        return done(body, { ...headers, [names.signature]: randomBytes(signature.length / 2).toString('hex') });
      }
      // Another key of the signer's size reaches any receiver as a signature of the right length that
      // no key decodes (unknown-key); 'other-size-key' is a signature of another length on purpose.
      const bits = privateKeyBits(options.privateKey);
      const key = otherKey(`${variant}/${bits}`, variant === 'other-size-key' ? (bits === 2048 ? 3072 : 2048) : bits);
      const { body, headers } = sign(event, bodyStyle, key);
      return done(body, headers);
    }
    case 'body-malformed': {
      const { body, headers } = sign(event);
      const text = body.toString('utf8');
      const broken: Record<string, () => Buffer> = {
        truncated: () => body.subarray(0, Math.floor(body.length / 2)),
        'html-error-page': () =>
          Buffer.from('<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n'),
        empty: () => Buffer.alloc(0),
        'not-utf8': () =>
          Buffer.from(
            Buffer.from(
              text.replace(/"event"\s*:\s*"/, (m) => `${m}\u0000`),
              'utf8',
            ).map((b) => (b === 0 ? 0xff : b)),
          ),
        'trailing-garbage': () => Buffer.concat([body, Buffer.from('\n--boundary--\n')]),
        'form-encoded': () => Buffer.from(`payload=${encodeURIComponent(text)}`),
        'top-level-array': () => Buffer.concat([Buffer.from('['), body, Buffer.from(']')]),
      };
      return done(Buffer.from(broken[variant]!()), headers);
    }
    case 'body-reserialized': {
      const extra: Record<string, unknown> = {
        'float-1.0': { score: rawJson('1.0') },
        'big-integer': { account_id: rawJson('12345678901234567891') },
        'float-1e16': { bytes_processed: rawJson('1e+16') },
        'integer-keys': { '10': 'ten', '2': 'two', ratio: rawJson('2.0') },
        'float-array': { boxes: [rawJson('0.5'), rawJson('3.0'), rawJson('12.0')] },
        'negative-float': { delta: rawJson('-7.0'), ok: true },
        'stringify-indent-2': { score: rawJson('1.0'), pages: 3 },
        'stringify-tab-newline': { total: rawJson('250.0') },
      };
      const { body, headers } = sign(withBreak(event, extra[variant]));
      // A queue or a log that stored the parsed body: compact, indented, or indented with a final newline.
      const value: unknown = JSON.parse(body.toString('utf8'));
      const text =
        variant === 'stringify-indent-2'
          ? JSON.stringify(value, null, 2)
          : variant === 'stringify-tab-newline'
            ? `${JSON.stringify(value, null, '\t')}\n`
            : JSON.stringify(value);
      return done(Buffer.from(text, 'utf8'), headers);
    }
    case 'body-transcoded': {
      const latin1Only = variant === 'reencoded-latin1';
      const decomposed = variant === 'nfc';
      const note = (latin1Only ? LATIN1_NOTE : NON_ASCII_NOTE).normalize(decomposed ? 'NFD' : 'NFC');
      // Python's default json.dumps escapes non-ASCII, which no charset change touches: use raw UTF-8.
      const { body, headers } = sign(withBreak(event, { note }), bodyStyle === 'python' ? 'compact' : bodyStyle);
      const text = body.toString('utf8');
      const latin1Mojibake = (bytes: Buffer): Buffer => Buffer.from(decodeSingle(bytes, 'latin1'), 'utf8');
      const changed: Record<string, () => Buffer | undefined> = {
        'latin1-mojibake': () => latin1Mojibake(body),
        'cp1252-mojibake': () => Buffer.from(decodeSingle(body, 'cp1252'), 'utf8'),
        'double-mojibake': () => latin1Mojibake(latin1Mojibake(body)),
        nfd: () => Buffer.from(text.normalize('NFD'), 'utf8'),
        nfc: () => Buffer.from(text.normalize('NFC'), 'utf8'),
        'reencoded-latin1': () => singleBytes(text, 'latin1'),
        'reencoded-cp1252': () => singleBytes(text, 'cp1252'),
        // Two changes in a row: a relay that re-dumps the JSON with Python's defaults (ASCII escapes)
        // hides the first change's characters behind \\u escapes.
        'nfd-then-redumped': () => pythonRedump(Buffer.from(text.normalize('NFD'), 'utf8')),
        'mojibake-then-redumped': () => pythonRedump(latin1Mojibake(body)),
        'mojibake-then-nfd': () => Buffer.from(decodeSingle(body, 'latin1').normalize('NFD'), 'utf8'),
      };
      return done(changed[variant]!()!, headers);
    }
    case 'body-modified': {
      // Python's default layout: a JavaScript-compact body of edited content would read as re-serialized.
      const { body, headers } = sign(event, bodyStyle === 'compact' ? 'python' : bodyStyle);
      const value = toLosslessValue(parseBodyUnchecked(body, TRUSTED_INPUT)) as Record<string, LosslessJsonValue>;
      const edit: Record<string, () => void> = {
        'job-id-changed': () => (value['job_id'] = randomUUID()),
        'status-changed': () => (value['status'] = value['status'] === 'success' ? 'fail' : 'success'),
        'field-added': () => (value['injected_by_proxy'] = true),
        'field-removed': () => delete value[Object.keys(value).find((k) => k !== 'event') ?? 'event'],
        'string-edited': () => (value['provider'] = `${String(value['provider'] ?? '')}-edited`),
        'finished-at-edited': () => (value['finished_at'] = '2001-01-01T00:00:00+00:00'),
      };
      edit[variant]!();
      const edited = parseBodyUnchecked(Buffer.from(valueToJson(value), 'utf8'), TRUSTED_INPUT);
      return done(serializeTape(edited, PYTHON_DEFAULT_DUMPS), headers);
    }
  }
}

/** `json.dumps(json.loads(body))` in Python: its default layout, non-ASCII as `\\u` escapes. */
function pythonRedump(body: Buffer): Buffer {
  return serializeTape(parseBodyUnchecked(body, TRUSTED_INPUT), PYTHON_DEFAULT_DUMPS);
}

/** The modulus length of the signer's key, so a throwaway key of the same size can be made. */
function privateKeyBits(input: PrivateKeyInput): number {
  return loadPrivateKey(input).asymmetricKeyDetails?.modulusLength ?? 2048;
}

/** `event` with `extra` merged into `user_parameters.jobhook_break` (the spec's free-form echo). */
function withBreak(event: object, extra: unknown): object {
  const params = (event as { user_parameters?: unknown }).user_parameters;
  const base = typeof params === 'object' && params !== null && !Array.isArray(params) ? params : {};
  return { ...event, user_parameters: { ...base, jobhook_break: extra } };
}
