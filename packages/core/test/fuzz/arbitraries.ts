/**
 * fast-check arbitraries for fuzzing `receiver.handle`: request headers (with the verdict the
 * spec gives each variant), random body bytes, wild JSON texts, and mutations of signed bodies.
 * Everything is a plain record of numbers and strings, so failures shrink to readable cases.
 */
import fc from 'fast-check';
import {
  objectNodes,
  parseJsonTree,
  printJsonTree,
  prng,
  reescapeString,
  respellNumber,
  stringSlots,
  valueSlots,
  type JsonNode,
} from './json-text.js';

// ---------------------------------------------------------------------------------------------------
// Headers

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

const flipHexDigit = (hex: string, at: number): string =>
  hex.slice(0, at) + ((parseInt(hex[at]!, 16) ^ 1).toString(16)) + hex.slice(at + 1);

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
  return fc.oneof(
    { arbitrary: fc.constant(0), weight: firstWeight },
    { arbitrary: fc.nat({ max: table.length - 1 }), weight: 1 },
  );
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

// ---------------------------------------------------------------------------------------------------
// Random bodies

/** A large body, described rather than generated byte by byte (fast-check would take seconds). */
export interface LargeBody {
  kind: 'noise' | 'spaces-object' | 'long-string' | 'many-keys' | 'deep-arrays' | 'long-number';
  bytes: number;
  seed: number;
}

/** Builds the bytes of a {@link LargeBody}. */
export function buildLargeBody({ kind, bytes, seed }: LargeBody): Buffer {
  switch (kind) {
    case 'noise': {
      const out = Buffer.allocUnsafe(bytes);
      const next = prng(seed);
      for (let n = 0; n < bytes; n += 4) out.writeUInt32LE((next() * 2 ** 32) >>> 0, Math.min(n, bytes - 4));
      return out;
    }
    case 'spaces-object':
      return Buffer.from(`{${' '.repeat(Math.max(0, bytes - 2))}}`);
    case 'long-string':
      return Buffer.from(`{"a":"${'x'.repeat(Math.max(0, bytes - 8))}"}`);
    case 'many-keys': {
      const parts: string[] = [];
      let size = 2;
      for (let n = 0; size < bytes; n++) {
        const part = `"k${(n * 2654435761) % 1_000_003}":${n}`;
        parts.push(part);
        size += part.length + 1;
      }
      return Buffer.from(`{${parts.join(',')}}`);
    }
    case 'deep-arrays':
      return Buffer.from(`{"a":${'['.repeat(Math.max(0, bytes - 6))}}`);
    case 'long-number':
      return Buffer.from(`{"a":${'7'.repeat(Math.max(1, bytes - 6))}}`);
  }
}

/** Sizes of large bodies: around 100 KB, around the 1 MiB limit, and up to 2 MB. */
export const largeBodyArb: fc.Arbitrary<LargeBody> = fc.record({
  kind: fc.constantFrom<LargeBody['kind']>('noise', 'spaces-object', 'long-string', 'many-keys', 'deep-arrays', 'long-number'),
  bytes: fc.oneof(
    fc.integer({ min: 100_000, max: 2_000_000 }),
    fc.integer({ min: 1024 * 1024 - 4, max: 1024 * 1024 + 4 }),
  ),
  seed: fc.nat(),
});

const JSONISH = [...'{}[]",:0123456789.eE+-tfnrualsNIy \t\n\\/u'].concat(['\u00e9', '\ud800', '\u0000', '\u2028']);

/** Bytes a body could hold: random, JSON-alphabet soup, or mangled JSON text. */
export const smallBodyBytesArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 4096 }), weight: 4 },
  {
    arbitrary: fc.string({ unit: fc.constantFrom(...JSONISH), maxLength: 600 }).map((s) => Buffer.from(s, 'utf8')),
    weight: 3,
  },
  {
    arbitrary: fc
      .tuple(fc.json({ maxDepth: 3 }), fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat())
      .map(([text, junk, at]) => {
        const b = Buffer.from(`{"a":${text}}`, 'utf8');
        const pos = at % (b.length + 1);
        return Buffer.concat([b.subarray(0, pos), junk, b.subarray(pos)]);
      }),
    weight: 2,
  },
);

// ---------------------------------------------------------------------------------------------------
// Wild JSON

/** Depths around the default `maxDepth` (512) and far beyond. */
const depthArb = fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 505, max: 520 }), fc.constantFrom(600, 2001, 10_000, 100_000));

/** Nesting `depth` containers deep (the top-level object counts as one). */
export function nestedText(depth: number, style: 'arrays' | 'objects' | 'mixed' | 'unclosed'): string {
  const inner = Math.max(0, depth - 1);
  switch (style) {
    case 'arrays':
      return `{"a":${'['.repeat(inner)}1${']'.repeat(inner)}}`;
    case 'objects':
      return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    case 'mixed':
      return `{"a":${'[{"b":'.repeat(inner >> 1)}null${'}]'.repeat(inner >> 1)}}`;
    case 'unclosed':
      return `{"a":${'['.repeat(inner)}`;
  }
}

const nestedArb = fc
  .tuple(depthArb, fc.constantFrom<'arrays' | 'objects' | 'mixed' | 'unclosed'>('arrays', 'objects', 'mixed', 'unclosed'))
  .map(([depth, style]) => nestedText(depth, style));

/** Numbers Python reads in odd ways: past the 4300-digit int limit, overflowing, underflowing, long. */
const hugeNumberArb = fc
  .tuple(fc.constantFrom(17, 20, 309, 4299, 4300, 4301, 5000, 20_000), fc.constantFrom('int', 'negint', 'exp', 'frac', 'tiny', 'mixed'))
  .map(([digits, shape]) => {
    const d = '9'.repeat(digits);
    const n = { int: d, negint: `-${d}`, exp: `1e${d.slice(0, 6)}`, frac: `0.${d}`, tiny: `1e-${d.slice(0, 6)}`, mixed: `${d}.5e-3` }[shape];
    return `{"n":${n}}`;
  });

/** Texts every JSON reader disagrees on, one way or another. */
export const SPECIAL_TEXTS: readonly string[] = [
  '{"s":"\\ud800"}',
  '{"s":"\\udc00\\ud800"}',
  '{"s":"\\ud83d\\ude00"}',
  '{"\\ud800":1,"\\ud800\\u0000":2}',
  '{"s":"\\u0000"}',
  '{"s":"\u0000"}',
  '{"s":"\u007f\u2028\u2029"}',
  '{"n":NaN}',
  '{"n":Infinity,"m":-Infinity}',
  '{"n":-NaN}',
  '{"n":nan}',
  '{"n":infinity}',
  '{"a":1,"a":2}',
  '{"a":{"b":1},"a":[2]}',
  '{"__proto__":{"admin":true}}',
  '{"__proto__":null,"constructor":{"prototype":{"admin":true}}}',
  '{"__proto__":1,"__proto__":{"x":1}}',
  '{"toString":1,"hasOwnProperty":2,"valueOf":null}',
  '\ufeff{}',
  '\ufeff\ufeff{}',
  '{"a":1}garbage',
  '{"a":1}{"b":2}',
  '{"a":1,}',
  '{,}',
  '{"a" 1}',
  '{"a":1e}',
  '{"a":1.}',
  '{"a":.5}',
  '{"a":01}',
  '{"a":+1}',
  '{"a":-}',
  '{"a":tru}',
  '{"a":"\\x41"}',
  "{'a':1}",
  '{a:1}',
  '{"a":1}\u0000',
  '{"a":1}\u00a0',
  '\u00a0{"a":1}',
  '\f{"a":1}',
  '{"a":"\\/\\b\\f\\n\\r\\t"}',
  '{"":""}',
  '{}',
  '[]',
  '[{}]',
  'null',
  'true',
  '"{}"',
  '1',
  '',
  ' ',
];

/** Keys that tempt prototype pollution or collide with Object.prototype. */
const TRICKY_KEY = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', 'job_id', 'event');

/** An event-shaped object (so a shape check would pass) with random extra data, as JSON text. */
const eventLikeArb = fc
  .record({
    status: fc.constantFrom('success', 'fail', 'pending'),
    output: fc.jsonValue({ maxDepth: 3 }),
    extraKey: TRICKY_KEY,
    extra: fc.jsonValue({ maxDepth: 2 }),
    jobId: fc.oneof(fc.uuid(), fc.string({ maxLength: 40 })),
  })
  .map(({ status, output, extraKey, extra, jobId }) => {
    const fields = [
      `"event":"async_job_completed"`,
      `"job_id":${JSON.stringify(jobId)}`,
      `"status":${JSON.stringify(status)}`,
      `"feature":"ocr","subfeature":"ocr_async","provider":"amazon","model":null`,
      `"created_at":"2024-01-01T00:00:00+00:00","finished_at":"2024-01-01T00:00:01+00:00"`,
      status === 'fail' ? `"error":{"message":"x"}` : `"output":${JSON.stringify(output) ?? 'null'}`,
      `${JSON.stringify(extraKey)}:${JSON.stringify(extra) ?? 'null'}`,
    ];
    return `{${fields.join(', ')}}`;
  });

/** Wild JSON texts (as bytes: some are not UTF-8), mostly objects so the signature check is reached. */
export const wildJsonArb: fc.Arbitrary<Buffer> = fc.oneof(
  { arbitrary: fc.json({ maxDepth: 4 }).map((t) => Buffer.from(t, 'utf8')), weight: 2 },
  { arbitrary: fc.json({ maxDepth: 4 }).map((t) => Buffer.from(`{"v":${t}}`, 'utf8')), weight: 2 },
  {
    arbitrary: fc
      .jsonValue({ maxDepth: 4, stringUnit: 'binary' })
      .map((v) => Buffer.from(`{"v":${JSON.stringify(v) ?? 'null'}}`, 'utf8')),
    weight: 2,
  },
  { arbitrary: eventLikeArb.map((t) => Buffer.from(t, 'utf8')), weight: 3 },
  { arbitrary: nestedArb.map((t) => Buffer.from(t, 'utf8')), weight: 1 },
  { arbitrary: hugeNumberArb.map((t) => Buffer.from(t, 'utf8')), weight: 1 },
  { arbitrary: fc.constantFrom(...SPECIAL_TEXTS).map((t) => Buffer.from(t, 'utf8')), weight: 2 },
  {
    // Invalid UTF-8 inside a string: overlong, a raw surrogate, truncated sequences.
    arbitrary: fc
      .constantFrom([0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff], [0xf4, 0x90, 0x80, 0x80], [0x80])
      .map((bad) => Buffer.concat([Buffer.from('{"s":"a'), Buffer.from(bad), Buffer.from('b"}')])),
    weight: 1,
  },
);

/** How property 2 signs a wild body. */
export type WildSignature =
  | { kind: 'none' }
  | { kind: 'random'; bytes: Uint8Array }
  | { kind: 'wrong-key'; profile: 'python' | 'python-ascii' | 'orjson' | 'javascript' }
  | { kind: 'replay'; index: number }
  | { kind: 'malformed'; text: string };

export const wildSignatureArb: fc.Arbitrary<WildSignature> = fc.oneof(
  { arbitrary: fc.constant<WildSignature>({ kind: 'none' }), weight: 1 },
  { arbitrary: fc.uint8Array({ minLength: 256, maxLength: 256 }).map((bytes) => ({ kind: 'random' as const, bytes })), weight: 3 },
  {
    arbitrary: fc
      .constantFrom<'python' | 'python-ascii' | 'orjson' | 'javascript'>('python', 'python-ascii', 'orjson', 'javascript')
      .map((profile) => ({ kind: 'wrong-key' as const, profile })),
    weight: 2,
  },
  { arbitrary: fc.nat().map((index) => ({ kind: 'replay' as const, index })), weight: 2 },
  {
    arbitrary: fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEFxg ,'), maxLength: 600 }).map((text) => ({ kind: 'malformed' as const, text })),
    weight: 1,
  },
);

// ---------------------------------------------------------------------------------------------------
// Mutations of a signed body

/** A change made on the body's JSON structure (parsed and re-printed). */
export type TreeOp =
  | { op: 'reorder'; target: number; seed: number }
  | { op: 'respell'; target: number; variant: number; k: number }
  | { op: 'reescape'; target: number; choices: number[] }
  | { op: 'duplicate'; target: number; member: number; before: boolean; replacement: string | null }
  | { op: 'inject'; target: number; at: number; key: string; valueText: string }
  | { op: 'delete'; target: number; member: number }
  | { op: 'replace'; target: number; raw: string }
  | { op: 'wrap'; target: number };

/** A change made on the body's bytes. */
export type ByteOp =
  | { op: 'flip'; pos: number; bit: number }
  | { op: 'insert'; pos: number; byte: number }
  | { op: 'remove'; pos: number; len: number }
  | { op: 'truncate'; keep: number }
  | { op: 'swap'; pos: number }
  | { op: 'bom' }
  | { op: 'append'; text: string }
  | { op: 'prepend'; text: string };

/** How the re-printed body is spaced. */
export type Spacing =
  | { kind: 'original' }
  | { kind: 'compact' }
  | { kind: 'json-whitespace'; seed: number }
  | { kind: 'foreign-whitespace'; seed: number; char: string };

/** One mutation: spacing, structural changes, then byte changes. */
export interface Mutation {
  spacing: Spacing;
  tree: TreeOp[];
  bytes: ByteOp[];
}

const REPLACEMENT_LITERALS = [
  'null', 'true', 'false', '0', '-0', '0.0', '-0.0', '1', '1.0', '1e2', '100', '100.0', '1e400', '-1e400', 'NaN', 'Infinity',
  '-Infinity', '9007199254740993', '""', '"null"', '{}', '[]', '[null]', '{"__proto__":{"admin":true}}',
];

const treeOpArb: fc.Arbitrary<TreeOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('reorder' as const), target: fc.nat(), seed: fc.nat() }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('respell' as const), target: fc.nat(), variant: fc.nat(), k: fc.nat() }), weight: 4 },
  {
    arbitrary: fc.record({ op: fc.constant('reescape' as const), target: fc.nat(), choices: fc.array(fc.nat({ max: 5 }), { maxLength: 8 }) }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('duplicate' as const),
      target: fc.nat(),
      member: fc.nat(),
      before: fc.boolean(),
      replacement: fc.option(fc.constantFrom(...REPLACEMENT_LITERALS), { nil: null }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('inject' as const),
      target: fc.nat(),
      at: fc.nat(),
      key: fc.oneof(TRICKY_KEY, fc.string({ maxLength: 6 })),
      valueText: fc.oneof(fc.constantFrom(...REPLACEMENT_LITERALS), fc.json({ maxDepth: 2 })),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), target: fc.nat(), member: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ op: fc.constant('replace' as const), target: fc.nat(), raw: fc.constantFrom(...REPLACEMENT_LITERALS) }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant('wrap' as const), target: fc.nat() }), weight: 1 },
);

const byteOpArb: fc.Arbitrary<ByteOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('flip' as const), pos: fc.nat(), bit: fc.nat({ max: 7 }) }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('insert' as const), pos: fc.nat(), byte: fc.nat({ max: 255 }) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('remove' as const), pos: fc.nat(), len: fc.integer({ min: 1, max: 16 }) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('truncate' as const), keep: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('swap' as const), pos: fc.nat() }), weight: 1 },
  { arbitrary: fc.constant({ op: 'bom' as const }), weight: 1 },
  {
    arbitrary: fc.record({ op: fc.constant('append' as const), text: fc.constantFrom(' ', '\n', '\r\n', '\t', '\u00a0', '\u0000', 'x', ',', '}', '{}') }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ op: fc.constant('prepend' as const), text: fc.constantFrom(' ', '\n', '\t', '\u00a0', '\ufeff', '\f', '[') }),
    weight: 1,
  },
);

const spacingArb: fc.Arbitrary<Spacing> = fc.oneof(
  { arbitrary: fc.constant<Spacing>({ kind: 'original' }), weight: 4 },
  { arbitrary: fc.constant<Spacing>({ kind: 'compact' }), weight: 1 },
  { arbitrary: fc.nat().map((seed): Spacing => ({ kind: 'json-whitespace', seed })), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.nat(), fc.constantFrom('\u00a0', '\f', '\v', '\u2028', '\u3000', '\u0085'))
      .map(([seed, char]): Spacing => ({ kind: 'foreign-whitespace', seed, char })),
    weight: 1,
  },
);

/** Structural changes meant to keep the canonical form (the oracle still decides: an int respelled as a float does not). */
const keepingTreeOpArb: fc.Arbitrary<TreeOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('reorder' as const), target: fc.nat(), seed: fc.nat() }), weight: 3 },
  {
    arbitrary: fc.record({ op: fc.constant('reescape' as const), target: fc.nat(), choices: fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 8 }) }),
    weight: 3,
  },
  { arbitrary: fc.record({ op: fc.constant('respell' as const), target: fc.nat(), variant: fc.nat({ max: 5 }), k: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('duplicate' as const),
      target: fc.nat(),
      member: fc.nat(),
      before: fc.constant(true),
      replacement: fc.option(fc.constantFrom(...REPLACEMENT_LITERALS), { nil: null }),
    }),
    weight: 1,
  },
);

/**
 * Mutations of a signed body: untouched, changes meant to keep the canonical form (re-spaced,
 * keys reordered, strings re-escaped, numbers re-spelled, an earlier duplicate key), and changes of
 * values and bytes.
 */
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.constant<Mutation>({ spacing: { kind: 'original' }, tree: [], bytes: [] }), weight: 1 },
  {
    arbitrary: fc.record({
      spacing: fc.oneof(spacingArb.filter((s) => s.kind !== 'foreign-whitespace'), fc.constant<Spacing>({ kind: 'original' })),
      tree: fc.array(keepingTreeOpArb, { minLength: 1, maxLength: 4 }),
      bytes: fc.constant<ByteOp[]>([]),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      spacing: spacingArb,
      tree: fc.array(treeOpArb, { minLength: 1, maxLength: 3 }),
      bytes: fc.constant<ByteOp[]>([]),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      spacing: spacingArb,
      tree: fc.array(treeOpArb, { maxLength: 2 }),
      bytes: fc.array(byteOpArb, { minLength: 1, maxLength: 3 }),
    }),
    weight: 2,
  },
);

function shuffle<T>(items: T[], seed: number): void {
  const next = prng(seed);
  for (let n = items.length - 1; n > 0; n--) {
    const m = Math.floor(next() * (n + 1));
    [items[n], items[m]] = [items[m]!, items[n]!];
  }
}

function applyTreeOp(root: { node: JsonNode }, op: TreeOp): void {
  const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);
  switch (op.op) {
    case 'reorder': {
      const obj = pick(objectNodes(root.node), op.target);
      if (obj !== undefined) shuffle(obj.members, op.seed);
      return;
    }
    case 'respell': {
      const numbers = valueSlots(root).filter((s) => {
        const n = s.get();
        return n.kind === 'literal' && /^-?[\dIN]/.test(n.raw);
      });
      const slot = pick(numbers, op.target);
      const node = slot?.get();
      if (slot !== undefined && node?.kind === 'literal') slot.set({ kind: 'literal', raw: respellNumber(node.raw, op.variant, op.k) });
      return;
    }
    case 'reescape': {
      const slot = pick(stringSlots(root.node), op.target);
      if (slot !== undefined) slot.set(reescapeString(slot.get(), op.choices));
      return;
    }
    case 'duplicate': {
      const obj = pick(objectNodes(root.node), op.target);
      const idx = obj === undefined || obj.members.length === 0 ? -1 : op.member % obj.members.length;
      if (obj === undefined || idx < 0) return;
      const member = obj.members[idx]!;
      const value: JsonNode = op.replacement === null ? structuredClone(member.value) : { kind: 'literal', raw: op.replacement };
      obj.members.splice(op.before ? idx : idx + 1, 0, { key: member.key, value });
      return;
    }
    case 'inject': {
      const obj = pick(objectNodes(root.node), op.target);
      if (obj !== undefined) {
        obj.members.splice(op.at % (obj.members.length + 1), 0, { key: JSON.stringify(op.key), value: { kind: 'literal', raw: op.valueText } });
      }
      return;
    }
    case 'delete': {
      const obj = pick(objectNodes(root.node), op.target);
      if (obj !== undefined && obj.members.length > 0) obj.members.splice(op.member % obj.members.length, 1);
      return;
    }
    case 'replace': {
      pick(valueSlots(root), op.target)?.set({ kind: 'literal', raw: op.raw });
      return;
    }
    case 'wrap': {
      const slot = pick(valueSlots(root), op.target);
      if (slot !== undefined) slot.set({ kind: 'array', items: [slot.get()] });
      return;
    }
  }
}

function spacingGap(spacing: Spacing): (slot: number) => string {
  if (spacing.kind === 'compact' || spacing.kind === 'original') return () => '';
  const next = prng(spacing.seed);
  const pool = [' ', '  ', '\n', '\t', '\r\n', '\n  ', ''];
  if (spacing.kind === 'json-whitespace') return () => pool[Math.floor(next() * pool.length)]!;
  // One foreign character somewhere early, JSON whitespace elsewhere.
  const at = Math.floor(next() * 6);
  return (slot) => (slot === at ? spacing.char : pool[Math.floor(next() * pool.length)]!);
}

function applyByteOp(body: Buffer, op: ByteOp): Buffer {
  const at = (pos: number): number => (body.length === 0 ? 0 : pos % (body.length + 1));
  switch (op.op) {
    case 'flip': {
      if (body.length === 0) return body;
      const out = Buffer.from(body);
      const pos = op.pos % body.length;
      out[pos] = out[pos]! ^ (1 << op.bit);
      return out;
    }
    case 'insert':
      return Buffer.concat([body.subarray(0, at(op.pos)), Buffer.from([op.byte]), body.subarray(at(op.pos))]);
    case 'remove':
      return Buffer.concat([body.subarray(0, at(op.pos)), body.subarray(at(op.pos) + op.len)]);
    case 'truncate':
      return body.subarray(0, at(op.keep));
    case 'swap': {
      if (body.length < 2) return body;
      const out = Buffer.from(body);
      const pos = op.pos % (body.length - 1);
      [out[pos], out[pos + 1]] = [out[pos + 1]!, out[pos]!];
      return out;
    }
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]);
    case 'append':
      return Buffer.concat([body, Buffer.from(op.text, 'utf8')]);
    case 'prepend':
      return Buffer.concat([Buffer.from(op.text, 'utf8'), body]);
  }
}

/** Applies a mutation to a (valid JSON) body. */
export function applyMutation(body: Buffer, mutation: Mutation): Buffer {
  let out = body;
  if (mutation.tree.length > 0 || mutation.spacing.kind !== 'original') {
    const root = { node: parseJsonTree(body.toString('utf8')) };
    for (const op of mutation.tree) applyTreeOp(root, op);
    out = Buffer.from(printJsonTree(root.node, spacingGap(mutation.spacing)), 'utf8');
  }
  for (const op of mutation.bytes) out = applyByteOp(out, op);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Randomly shaped events, to sign with the right key

/** Values that are valid JSON but odd: prototype keys, duplicates, Python's literals, limits. */
const ODD_VALUES = [
  '{"__proto__":{"admin":true}}',
  '{"a":1,"a":2}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '1e400',
  '-1e400',
  'NaN',
  '-0',
  '-0.0',
  '1.0',
  '1e-400',
  '9'.repeat(4300),
  `-${'9'.repeat(4300)}`,
  '18446744073709551616',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"\\u0000"',
  `${'['.repeat(505)}${']'.repeat(505)}`,
  `${'{"a":'.repeat(300)}1${'}'.repeat(300)}`,
];

const valueTextArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.json({ maxDepth: 3 }), weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }).map((v) => JSON.stringify(v) ?? 'null'), weight: 2 },
  { arbitrary: fc.constantFrom(...ODD_VALUES), weight: 2 },
);

const objectTextArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.dictionary(fc.string({ maxLength: 6 }), valueTextArb, { maxKeys: 4 }).map((d) => `{${Object.entries(d).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`), weight: 4 },
  { arbitrary: fc.constantFrom('null', '[]', '"text"', '1', '{}', '{"__proto__":{"admin":true}}'), weight: 1 },
);

/** An `async_job_completed` event as JSON text, valid or broken in one or two fields. */
export const eventTextArb: fc.Arbitrary<string> = fc
  .record({
    event: fc.oneof({ arbitrary: fc.constant('"async_job_completed"'), weight: 8 }, fc.constantFrom('"job_completed"', 'null', '1')),
    jobId: fc.oneof({ arbitrary: fc.uuid().map((u) => JSON.stringify(u)), weight: 8 }, fc.constantFrom('"not-a-uuid"', '123', '""', 'null')),
    status: fc.constantFrom('"success"', '"success"', '"fail"', '"fail"', '"done"', 'null'),
    output: objectTextArb,
    error: fc.constantFrom('{"message":"x"}', '{"message":"x","error_code":"e"}', '{"message":1}', '{"message":"x","error_code":5}', 'null', '"x"'),
    model: fc.constantFrom('null', 'null', '"m"', '5'),
    userParameters: fc.option(objectTextArb, { nil: undefined }),
    cost: fc.constantFrom(undefined, '"0.12"', '0.12', 'null', '[]'),
    extra: fc.option(fc.tuple(TRICKY_KEY, valueTextArb), { nil: undefined }),
    drop: fc.option(fc.constantFrom('feature', 'provider', 'created_at', 'model', 'status', 'job_id', 'event', 'output', 'error'), {
      nil: undefined,
    }),
  })
  .map((e) => {
    const members: Array<[string, string | undefined]> = [
      ['event', e.event],
      ['job_id', e.jobId],
      ['status', e.status],
      ['feature', '"ocr"'],
      ['subfeature', '"ocr_async"'],
      ['provider', '"amazon"'],
      ['model', e.model],
      ['created_at', '"2024-01-01T00:00:00+00:00"'],
      ['finished_at', '"2024-01-01T00:00:01+00:00"'],
      e.status === '"fail"' ? ['error', e.error] : ['output', e.output],
      ['user_parameters', e.userParameters],
      ['cost', e.cost],
    ];
    if (e.extra !== undefined) members.push([e.extra[0], e.extra[1]]);
    const kept = members.filter(([k, v]) => v !== undefined && k !== e.drop);
    return `{${kept.map(([k, v]) => `${JSON.stringify(k)}: ${v!}`).join(', ')}}`;
  });
