/**
 * Request-header variants for fuzzing `receiver.handle`: methods, content types, hash-algorithm and
 * signature headers, and the shapes a headers object comes in, each with the verdict the spec and
 * the receiver's TSDoc give it, so a property knows what the headers alone must cause.
 */
import fc from 'fast-check';

/** One variant of a request part, and whether a receiver must accept it (all else being right). */
export interface Variant<T> {
  value: T;
  ok: boolean;
}

/** Methods: POST in any case is a webhook; anything else is 405. */
export const METHODS: readonly Variant<string>[] = [
  { value: 'POST', ok: true },
  { value: 'post', ok: true },
  { value: 'Post', ok: true },
  { value: 'PUT', ok: false },
  { value: 'GET', ok: false },
  { value: 'PATCH', ok: false },
  { value: 'HEAD', ok: false },
  { value: 'OPTIONS', ok: false },
  { value: 'POSTS', ok: false },
  { value: '', ok: false },
];

/** Content types: JSON with a UTF-8 charset or none is read; anything else is 415. */
export const CONTENT_TYPES: readonly Variant<string | undefined>[] = [
  { value: 'application/json', ok: true },
  { value: 'application/json; charset=utf-8', ok: true },
  { value: 'application/json;charset=UTF-8', ok: true },
  { value: 'application/json; charset="utf-8"', ok: true },
  { value: 'application/json; charset=utf8', ok: true },
  { value: 'Application/JSON', ok: true },
  { value: ' application/json ', ok: true },
  { value: 'application/json; foo=bar', ok: true },
  { value: 'application/cloudevents+json', ok: true },
  { value: 'application/json; charset=utf-16', ok: false },
  { value: 'application/json; charset=utf-16le', ok: false },
  { value: 'application/json; charset=latin1', ok: false },
  { value: 'application/json; charset=us-ascii', ok: false },
  { value: 'text/plain', ok: false },
  { value: 'text/json', ok: false },
  { value: 'application/x-www-form-urlencoded', ok: false },
  { value: 'application/jsonp', ok: false },
  { value: 'multipart/form-data; boundary=x', ok: false },
  { value: '', ok: false },
  { value: undefined, ok: false },
];

/** Hash-algorithm header: absent, or SHA256 in any case and padding; other algorithms are 401. */
export const HASH_ALGORITHMS: readonly Variant<string | undefined>[] = [
  { value: 'SHA256', ok: true },
  { value: 'sha256', ok: true },
  { value: 'Sha256', ok: true },
  { value: ' SHA256 ', ok: true },
  { value: undefined, ok: true },
  { value: 'SHA-256', ok: false },
  { value: 'sha-256', ok: false },
  { value: 'SHA512', ok: false },
  { value: 'SHA1', ok: false },
  { value: 'RSA-SHA256', ok: false },
  { value: 'SHA256, SHA256', ok: false },
  { value: '', ok: false },
];

/**
 * A transformation of the signature header: `same` when it still decodes to the signed bytes,
 * `other` when it decodes to other bytes (well-formed hex: the body is still parsed, so a broken
 * body answers 400), `unreadable` when it is absent or not one even-length hex string (401 at once).
 */
export interface SignatureForm {
  label: string;
  apply(hex: string): string | string[] | undefined;
  decodes: 'same' | 'other' | 'unreadable';
}

const flipHexDigit = (hex: string, at: number): string => hex.slice(0, at) + (parseInt(hex[at]!, 16) ^ 1).toString(16) + hex.slice(at + 1);

/** Signature header variants (the verifier takes hex of either case, trimmed; see signature-hex.ts). */
export const SIGNATURE_FORMS: readonly SignatureForm[] = [
  { label: 'as signed', apply: (h) => h, decodes: 'same' },
  { label: 'upper case', apply: (h) => h.toUpperCase(), decodes: 'same' },
  { label: 'mixed case', apply: (h) => [...h].map((c, n) => (n % 3 === 0 ? c.toUpperCase() : c)).join(''), decodes: 'same' },
  { label: 'padded', apply: (h) => ` \t${h} `, decodes: 'same' },
  { label: 'one-element list', apply: (h) => [h], decodes: 'same' },
  { label: 'absent', apply: () => undefined, decodes: 'unreadable' },
  { label: 'empty', apply: () => '', decodes: 'unreadable' },
  { label: 'blank', apply: () => '   ', decodes: 'unreadable' },
  { label: 'sent twice', apply: (h) => [h, h], decodes: 'unreadable' },
  { label: 'joined twice', apply: (h) => `${h}, ${h}`, decodes: 'unreadable' },
  { label: 'first digit flipped', apply: (h) => flipHexDigit(h, 0), decodes: 'other' },
  { label: 'last digit flipped', apply: (h) => flipHexDigit(h, h.length - 1), decodes: 'other' },
  { label: 'middle digit flipped', apply: (h) => flipHexDigit(h, h.length >> 1), decodes: 'other' },
  { label: 'last byte cut', apply: (h) => h.slice(0, -2), decodes: 'other' },
  { label: 'odd length', apply: (h) => h.slice(0, -1), decodes: 'unreadable' },
  { label: 'zero byte prepended', apply: (h) => `00${h}`, decodes: 'other' },
  { label: 'zero byte appended', apply: (h) => `${h}00`, decodes: 'other' },
  { label: '0x prefix', apply: (h) => `0x${h}`, decodes: 'unreadable' },
  { label: 'base64', apply: (h) => Buffer.from(h, 'hex').toString('base64'), decodes: 'unreadable' },
  { label: 'non-hex letter', apply: (h) => `${h.slice(0, -1)}g`, decodes: 'unreadable' },
  { label: 'far too long', apply: (h) => h.repeat(10), decodes: 'unreadable' },
];

/** How the headers object reaches `handle`: Node's lower-case record, another record, or fetch `Headers`. */
export type HeaderForm = 'node' | 'title-case' | 'upper-case' | 'fetch';

/** Indices into the tables above. */
export interface HeaderChoice {
  method: number;
  contentType: number;
  hashAlgorithm: number;
  signature: number;
  form: HeaderForm;
  /** X-Service-Webhook: the receiver does not depend on it. */
  webhookHeader: 'true' | 'absent' | 'false';
}

/** The request part of a case, and what the receiver must answer for the headers alone. */
export interface BuiltHeaders {
  method: string;
  headers: Record<string, string | string[]> | Headers;
  /** True when every header is acceptable, so the body and signature decide. */
  ok: boolean;
  /**
   * When not ok, the statuses the headers allow (method, then content type, then the signature
   * headers): one status, or 400/401 when a well-formed but wrong signature leaves it to the body.
   */
  refusal: readonly number[] | undefined;
  label: string;
}

function weightedIndex(table: readonly unknown[], firstWeight: number): fc.Arbitrary<number> {
  return fc.oneof({ arbitrary: fc.constant(0), weight: firstWeight }, { arbitrary: fc.nat({ max: table.length - 1 }), weight: 1 });
}

/**
 * Header choices: mostly the signer's own headers (`plainWeight` to 1 per part), so the body
 * decides most cases.
 */
export function headerChoiceArb(plainWeight = 6): fc.Arbitrary<HeaderChoice> {
  return fc.record({
    method: weightedIndex(METHODS, plainWeight * 2),
    contentType: weightedIndex(CONTENT_TYPES, plainWeight),
    hashAlgorithm: weightedIndex(HASH_ALGORITHMS, plainWeight),
    signature: weightedIndex(SIGNATURE_FORMS, plainWeight),
    form: fc.constantFrom<HeaderForm>('node', 'node', 'title-case', 'upper-case', 'fetch'),
    webhookHeader: fc.constantFrom<'true' | 'absent' | 'false'>('true', 'true', 'absent', 'false'),
  });
}

/** The signer's headers, untouched. */
export const PLAIN_HEADERS: HeaderChoice = {
  method: 0,
  contentType: 0,
  hashAlgorithm: 0,
  signature: 0,
  form: 'node',
  webhookHeader: 'true',
};

/** Builds the method and headers of a request carrying `signatureHex` (or no signature when undefined). */
export function buildHeaders(choice: HeaderChoice, signatureHex: string | undefined): BuiltHeaders {
  const method = METHODS[choice.method]!;
  const contentType = CONTENT_TYPES[choice.contentType]!;
  const hash = HASH_ALGORITHMS[choice.hashAlgorithm]!;
  const sigForm = SIGNATURE_FORMS[choice.signature]!;
  const signature = signatureHex === undefined ? undefined : sigForm.apply(signatureHex);
  const entries: Array<[string, string | string[] | undefined]> = [
    ['content-type', contentType.value],
    ['user-agent', 'jobhook-fuzz'],
    ['x-service-webhook', choice.webhookHeader === 'absent' ? undefined : choice.webhookHeader],
    ['x-service-signature', signature],
    ['x-service-hash-algorithm', hash.value],
  ];
  const rename = (name: string): string =>
    choice.form === 'title-case'
      ? name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase())
      : choice.form === 'upper-case'
        ? name.toUpperCase()
        : name;
  let headers: Record<string, string | string[]> | Headers;
  if (choice.form === 'fetch') {
    const h = new Headers();
    for (const [name, value] of entries) {
      for (const v of value === undefined ? [] : Array.isArray(value) ? value : [value]) h.append(name, v);
    }
    headers = h;
  } else {
    const record: Record<string, string | string[]> = {};
    for (const [name, value] of entries) if (value !== undefined) record[rename(name)] = value;
    headers = record;
  }
  const decodes = signatureHex === undefined ? 'unreadable' : sigForm.decodes;
  const refusal = !method.ok
    ? [405]
    : !contentType.ok
      ? [415]
      : !hash.ok || decodes === 'unreadable'
        ? [401]
        : decodes === 'other'
          ? [400, 401]
          : undefined;
  return {
    method: method.value,
    headers,
    ok: refusal === undefined,
    refusal,
    label: `${method.value} / ${String(contentType.value)} / hash ${String(hash.value)} / sig ${signatureHex === undefined ? 'none' : sigForm.label} / ${choice.form}`,
  };
}
