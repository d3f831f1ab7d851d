/**
 * The bodies of the differential test (../differential.test.ts): JSON *text* generated directly
 * (JavaScript values cannot express Python's ints and floats exactly) by seeded fast-check
 * arbitraries, and the fixed regression cases sent in the same batch.
 */
import fc from 'fast-check';
import { seededRandom } from '../helpers/seeded-random.js';

// ---------------------------------------------------------------------------------------------------
// Body text model
//
// Bodies are built as JSON text. Inside that text, RAW followed by 4 hex digits stands for one
// UTF-8-encoded surrogate (3 bytes, ED A0 80 for D800), which no JavaScript string can carry to
// Buffer.from(..., 'utf8'); Python's json.loads(bytes) decodes them with `surrogatepass`.
// U+0001 never appears raw in a generated body otherwise (raw control characters are invalid in
// JSON strings; the generator only writes them escaped).

const RAW = '\u0001';

function rawSurrogate(unit: number): string {
  return RAW + unit.toString(16).padStart(4, '0');
}

/** UTF-8 of `text`, RAW markers replaced by their encoded surrogates. */
function encodeText(text: string): Buffer {
  if (!text.includes(RAW)) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let i = 0;
  while (i < text.length) {
    const j = text.indexOf(RAW, i);
    if (j < 0) {
      parts.push(Buffer.from(text.slice(i), 'utf8'));
      break;
    }
    parts.push(Buffer.from(text.slice(i, j), 'utf8'));
    const unit = Number.parseInt(text.slice(j + 1, j + 5), 16);
    parts.push(Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]));
    i = j + 5;
  }
  return Buffer.concat(parts);
}

type Node =
  | { readonly t: 'lit'; readonly text: string }
  | { readonly t: 'arr'; readonly items: readonly Node[] }
  | { readonly t: 'obj'; readonly members: readonly (readonly [string, Node])[] };

type StyleKind = 'compact' | 'python' | 'pretty' | 'odd' | 'canonical';

interface Style {
  readonly kind: StyleKind;
  /** Indentation unit of `pretty`. */
  readonly indent: string;
  /** `\r\n` line ends in `pretty`. */
  readonly crlf: boolean;
  /** Seed of the whitespace of `odd`. */
  readonly seed: number;
}

const WHITESPACE = [' ', '\t', '\n', '\r'] as const;

/** Writes a node tree as JSON text in a style (keys and literals are already JSON text). */
function render(root: Node, style: Style): string {
  const rng = seededRandom(style.seed);
  const out: string[] = [];
  const odd = style.kind === 'odd';
  const ws = (): string => {
    if (!odd || rng() < 0.45) return '';
    let s = '';
    const n = 1 + Math.floor(rng() * 3);
    for (let i = 0; i < n; i++) s += WHITESPACE[Math.floor(rng() * 4)] ?? ' ';
    return s;
  };
  const lineBreaks = style.kind === 'pretty' || style.kind === 'canonical';
  const indent = style.kind === 'canonical' ? '  ' : style.indent;
  const eol = style.kind === 'pretty' && style.crlf ? '\r\n' : '\n';
  const nl = (depth: number): string => (lineBreaks ? eol + indent.repeat(depth) : '');
  const itemSep = style.kind === 'python' ? ', ' : ',';
  const keySep = style.kind === 'compact' || odd ? ':' : ': ';

  const value = (node: Node, depth: number): void => {
    switch (node.t) {
      case 'lit':
        out.push(node.text);
        return;
      case 'arr': {
        if (node.items.length === 0) {
          out.push('[', ws(), ']');
          return;
        }
        out.push('[');
        node.items.forEach((item, i) => {
          if (i > 0) out.push(itemSep);
          out.push(nl(depth + 1), ws());
          value(item, depth + 1);
          out.push(ws());
        });
        out.push(nl(depth), ']');
        return;
      }
      case 'obj': {
        if (node.members.length === 0) {
          out.push('{', ws(), '}');
          return;
        }
        let members = node.members;
        if (style.kind === 'canonical') {
          // Roughly what a canonical body looks like (sorted by the key's JSON text, which is close).
          members = [...members].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        }
        out.push('{');
        members.forEach(([key, item], i) => {
          if (i > 0) out.push(itemSep);
          out.push(nl(depth + 1), ws(), '"', key, '"', ws(), keySep, ws());
          value(item, depth + 1);
          out.push(ws());
        });
        out.push(nl(depth), '}');
        return;
      }
    }
  };
  out.push(ws());
  value(root, 0);
  out.push(ws());
  if (lineBreaks && rng() < 0.3) out.push(eol);
  return out.join('');
}

const lit = (text: string): Node => ({ t: 'lit', text });
const arr = (...items: Node[]): Node => ({ t: 'arr', items });
const obj = (...members: (readonly [string, Node])[]): Node => ({ t: 'obj', members });

/** `depth` containers nested (alternating by `pattern`), `inner` in the middle. */
function chain(depth: number, inner: Node, pattern: (level: number) => 'arr' | 'obj', key = 'd'): Node {
  let node = inner;
  for (let level = depth - 1; level >= 0; level--) {
    node = pattern(level) === 'arr' ? arr(node) : obj([key, node]);
  }
  return node;
}

// ---------------------------------------------------------------------------------------------------
// Arbitraries

type Flavor = 'clean' | 'lone' | 'raw';

const DIGITS = '0123456789'.split('');
const digitString = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...DIGITS), minLength: min, maxLength: max });
/** A decimal integer without leading zeros, `min`..`max` digits. */
const naturalDigits = (min: number, max: number): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(...DIGITS.slice(1)), digitString(min - 1, max - 1)).map(([a, b]) => a + b);
const sign = fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constant('-') });

/** `\uXXXX` in lower (0), upper (1) or mixed (2) case hex. */
function uEsc(cp: number, mode: number): string {
  const h = cp.toString(16).padStart(4, '0');
  if (mode === 0) return `\\u${h}`;
  if (mode === 1) return `\\u${h.toUpperCase()}`;
  return `\\u${[...h].map((c, i) => (i % 2 === 1 ? c.toUpperCase() : c)).join('')}`;
}
const hexCase = fc.integer({ min: 0, max: 2 });
const escOf = (cp: fc.Arbitrary<number>): fc.Arbitrary<string> => fc.tuple(cp, hexCase).map(([c, m]) => uEsc(c, m));
const pairEsc = (cp: number, m1: number, m2: number): string => {
  const v = cp - 0x10000;
  return uEsc(0xd800 + (v >> 10), m1) + uEsc(0xdc00 + (v & 0x3ff), m2);
};

const PRINTABLE = Array.from({ length: 0x5f }, (_, i) => String.fromCharCode(0x20 + i)).filter((c) => c !== '"' && c !== '\\');
const INTERESTING_BMP = [
  0x00, 0x1f, 0x20, 0x22, 0x2f, 0x41, 0x5c, 0x61, 0x7e, 0x7f, 0x80, 0xa0, 0xe9, 0xff, 0x100, 0x301, 0x7ff, 0x800, 0x2028, 0x2029, 0xfeff,
  0xe000, 0xf8ff, 0xfffd, 0xfffe, 0xffff,
];
const RAW_CHARS = [
  '😀',
  '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
  '\u{10000}',
  '\u{10FFFF}',
  '\u{1D11E}',
  '\u{E0001}',
  'e\u0301',
  '\u0301',
  'a\u0308\u0301',
  '\u2028',
  '\u2029',
  '\u007f',
  '\ue000',
  '\uf8ff',
  '\uffff',
  '\ufffd',
  '\ufeff',
  '\u200b',
  'é',
  'ß',
  'ÿ',
  '\u0080',
  '\u00a0',
  '\u07ff',
  '\u0800',
  '中文',
  'Ωμέγα',
];

const high = fc.integer({ min: 0xd800, max: 0xdbff });
const low = fc.integer({ min: 0xdc00, max: 0xdfff });
const astral = fc.integer({ min: 0x10000, max: 0x10ffff });

const piece = {
  plain: fc.string({ unit: fc.constantFrom(...PRINTABLE), minLength: 1, maxLength: 8 }),
  simpleEscape: fc.constantFrom('\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t'),
  controlEscape: escOf(fc.integer({ min: 0, max: 0x1f })),
  bmpEscape: escOf(
    fc.oneof(fc.constantFrom(...INTERESTING_BMP), fc.integer({ min: 0x20, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0xffff })),
  ),
  rawChar: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...RAW_CHARS) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 0x80, max: 0x10ffff })
        .filter((cp) => cp < 0xd800 || cp > 0xdfff)
        .map((cp) => String.fromCodePoint(cp)),
    },
  ),
  escapedPair: fc.tuple(astral, hexCase, hexCase).map(([cp, a, b]) => pairEsc(cp, a, b)),
  /** Escapes Python keeps as lone surrogates. */
  loneEscape: fc.oneof(
    escOf(high),
    escOf(low),
    // A high escape followed by an escape that is not a low surrogate.
    fc.tuple(escOf(high), escOf(fc.constantFrom(0x41, 0xd800, 0xdbff, 0xe000, 0x20, 0xffff))).map(([a, b]) => a + b),
    // Reversed pair.
    fc.tuple(escOf(low), escOf(high)).map(([a, b]) => a + b),
    // A high escape followed by something else.
    fc.tuple(escOf(high), fc.constantFrom('x', '\\n', '😀', '\\/', '\\\\u0041')).map(([a, b]) => a + b),
  ),
  /** UTF-8-encoded surrogates (CESU-8 style), accepted by Python's surrogatepass. */
  rawSurrogate: fc.oneof(
    fc.integer({ min: 0xd800, max: 0xdfff }).map(rawSurrogate),
    astral.map((cp) => {
      const v = cp - 0x10000;
      return rawSurrogate(0xd800 + (v >> 10)) + rawSurrogate(0xdc00 + (v & 0x3ff));
    }),
    fc.tuple(high, low, hexCase).map(([h, l, m]) => uEsc(h, m) + rawSurrogate(l)),
    fc.tuple(high, low, hexCase).map(([h, l, m]) => rawSurrogate(h) + uEsc(l, m)),
  ),
};

/** The inside of a JSON string literal (without quotes). */
function stringContent(flavor: Flavor): fc.Arbitrary<string> {
  const clean = fc
    .array(
      fc.oneof(
        { weight: 8, arbitrary: piece.plain },
        { weight: 2, arbitrary: piece.simpleEscape },
        { weight: 2, arbitrary: piece.controlEscape },
        { weight: 2, arbitrary: piece.bmpEscape },
        { weight: 3, arbitrary: piece.rawChar },
        { weight: 1, arbitrary: piece.escapedPair },
      ),
      { maxLength: 6 },
    )
    .map((parts) => parts.join(''));
  if (flavor === 'clean') return clean;
  const dirtyPiece =
    flavor === 'lone'
      ? piece.loneEscape
      : fc.oneof({ weight: 2, arbitrary: piece.rawSurrogate }, { weight: 1, arbitrary: piece.loneEscape });
  const dirty = fc.tuple(clean, dirtyPiece, clean).map(([a, b, c]) => a + b + c);
  return fc.oneof({ weight: 5, arbitrary: clean }, { weight: 1, arbitrary: dirty });
}

const KEY_POOL = [
  '10',
  '2',
  '1',
  '01',
  '-1',
  '1.5',
  '1e3',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  '',
  ' ',
  'a',
  'A',
  'b',
  'Z',
  'z',
  'aa',
  'a b',
  '\\u0061',
  'é',
  '\\u00e9',
  '\\u00E9',
  'e\u0301',
  '😀',
  '\\ud83d\\ude00',
  '\\uD83D\\uDE00',
  '\ue000',
  '\\ue000',
  '\uffff',
  '\u{10000}',
  '\\ud800\\udc00',
  '\ue000x',
  '\u{10000}x',
  '\uffffx',
  '\u{1F600}x',
  '\u007f',
  '\\u007f',
  '\\u0000',
  '\\n',
  '\\"',
  '\\\\',
  '\\/',
  '/',
  'ÿ',
  '\u0100',
  '中',
];
const LONE_KEYS = ['\\ud800', '\\udc00', '\\udbff', '\\ud83d', '\\ude00', '\\ud800\\ud800', '\\udfff\\ud800'];
const RAW_KEYS = [
  rawSurrogate(0xd800),
  rawSurrogate(0xd83d) + rawSurrogate(0xde00),
  rawSurrogate(0xdfff),
  `\\ud83d${rawSurrogate(0xde00)}`,
];

function keyArb(flavor: Flavor): fc.Arbitrary<string> {
  const pool = flavor === 'clean' ? KEY_POOL : flavor === 'lone' ? [...KEY_POOL, ...LONE_KEYS] : [...KEY_POOL, ...LONE_KEYS, ...RAW_KEYS];
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...pool) },
    { weight: 3, arbitrary: stringContent(flavor) },
    { weight: 1, arbitrary: fc.integer({ min: -5, max: 1000 }).map(String) },
  );
}

const TWO_53 = 2n ** 53n;
const TWO_63 = 2n ** 63n;
const TWO_64 = 2n ** 64n;

// Integers beyond 64 bits make the whole body unrepresentable in orjson, so they stay a minority.
const intLexeme: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: -1000, max: 1000 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0', '-0') },
  { weight: 3, arbitrary: fc.integer().map(String) },
  { weight: 2, arbitrary: fc.tuple(sign, fc.bigInt(TWO_53 - 4n, TWO_53 + 4n)).map(([s, v]) => s + v.toString()) },
  {
    weight: 1,
    arbitrary: fc.tuple(sign, fc.constantFrom(TWO_63, TWO_64), fc.bigInt(-3n, 3n)).map(([s, base, d]) => s + (base + d).toString()),
  },
  { weight: 1, arbitrary: fc.tuple(sign, naturalDigits(17, 22)).map(([s, d]) => s + d) },
  { weight: 1, arbitrary: fc.tuple(sign, naturalDigits(20, 100)).map(([s, d]) => s + d) },
);

/** Exact decimal lexemes around the midpoint between a double and the next one up. */
function decompose(x: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  return expBits === 0 ? { m: frac, e: -1074 } : { m: frac | (1n << 52n), e: expBits - 1075 };
}

function midpointLexeme(x: number, nudge: -1 | 0 | 1): string {
  const { m, e } = decompose(Math.abs(x));
  // midpoint = (2m + 1) * 2^(e - 1) = N * 10^k exactly
  const E = e - 1;
  const M = 2n * m + 1n;
  let N: bigint;
  let k: number;
  if (E >= 0) {
    N = M << BigInt(E);
    k = 0;
  } else {
    N = M * 5n ** BigInt(-E);
    k = E;
  }
  if (nudge !== 0) {
    N = N * 10n + BigInt(nudge);
    k -= 1;
  }
  return `${x < 0 || Object.is(x, -0) ? '-' : ''}${N.toString()}e${k}`;
}

const SPECIAL_FLOATS = [
  '1.0',
  '-1.0',
  '1e-07',
  '1E+16',
  '1e16',
  '1e15',
  '1e+15',
  '-0.0',
  '0.000',
  '0.0e0',
  '-0e-5',
  '1e400',
  '-1e400',
  '1e-400',
  '-1e-400',
  '5e-324',
  '4.9406564584124654e-324',
  '2.4703282292062327e-324',
  '2.4703282292062328e-324',
  '2.2250738585072014e-308',
  '2.225073858507201e-308',
  '2.2250738585072011e-308',
  '1.7976931348623157e308',
  '1.7976931348623158e+308',
  '1.7976931348623159e308',
  '9007199254740993.0',
  '9007199254740992.0',
  '0.1',
  '0.30000000000000004',
  '1e-4',
  '1e-5',
  '0.0001',
  '0.00001',
  '0.001',
  '123456789012345678901234567890.0',
  '1.23456789012345678901234567890',
  '0.000000000000000000000000000001',
  '1e22',
  '1e21',
  '1e23',
  '9999999999999998.0',
  '9999999999999999.0',
  '5e-1',
  '1.5',
  '100.0',
  '1e0',
  '1E-0',
  '1e007',
  '1e-007',
  '1E+0016',
  '1e0000000000000000000001',
  '1e99999999999999999999',
  '1e-99999999999999999999',
  '0e99999999999999999999',
  '3.141592653589793238462643383279',
  '2.718281828459045',
  '1.00000000000000011102230246251565404236316680908203125',
  '1.000000000000000111022302462515654042363166809082031250001',
  '1.00000000000000011102230246251565404236316680908203124999',
];

const floatLexeme: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_FLOATS) },
  // Random doubles, printed in several ways.
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 25 }))
      .map(([x, form, p]) => {
        switch (form) {
          case 0:
            return x.toPrecision(17);
          case 1:
            return x.toExponential(16);
          case 2:
            return x.toPrecision(p);
          case 3:
            return x.toExponential().replace('e+', 'E');
          default:
            return String(x);
        }
      }),
  },
  // Doubles of ordinary magnitude.
  {
    weight: 3,
    arbitrary: fc.tuple(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.integer({ min: 1, max: 17 })).map(([x, p]) => {
      const s = x.toPrecision(p);
      return /[.e]/.test(s) ? s : `${s}.0`;
    }),
  },
  // Constructed lexemes: many digits, exponents with signs and leading zeros.
  {
    weight: 4,
    arbitrary: fc
      .record({
        neg: fc.boolean(),
        int: fc.oneof(fc.constant('0'), naturalDigits(1, 30)),
        frac: fc.option(digitString(1, 30), { nil: undefined }),
        exp: fc.option(
          fc.record({
            e: fc.constantFrom('e', 'E'),
            sign: fc.constantFrom('', '+', '-'),
            zeros: fc.integer({ min: 0, max: 3 }),
            value: fc.oneof(
              fc.integer({ min: 0, max: 25 }),
              fc.integer({ min: 0, max: 340 }),
              fc.constantFrom(290, 300, 307, 308, 309, 320, 323, 324, 325, 330, 350, 400),
            ),
          }),
          { nil: undefined },
        ),
      })
      .map(({ neg, int, frac, exp }) => {
        let s = (neg ? '-' : '') + int;
        if (frac !== undefined) s += `.${frac}`;
        if (exp !== undefined) s += `${exp.e}${exp.sign}${'0'.repeat(exp.zeros)}${exp.value}`;
        if (frac === undefined && exp === undefined) s += '.0';
        return s;
      }),
  },
  // Hard rounding cases: exact midpoints between adjacent doubles, and just off them.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.oneof(
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.double({ min: 1, max: 2, noNaN: true }),
          fc.double({ min: 0, max: 1e-300, noNaN: true }),
        ),
        fc.constantFrom(-1 as const, 0 as const, 1 as const),
      )
      .filter(([x]) => x !== 0 && Number.isFinite(x))
      .map(([x, nudge]) => midpointLexeme(x, nudge)),
  },
);

const nonFinite = fc.constantFrom('NaN', 'Infinity', '-Infinity');

function leafArb(flavor: Flavor): fc.Arbitrary<Node> {
  return fc
    .oneof(
      { weight: 5, arbitrary: stringContent(flavor).map((s) => `"${s}"`) },
      { weight: 3, arbitrary: intLexeme },
      { weight: 4, arbitrary: floatLexeme },
      { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null') },
      { weight: 1, arbitrary: nonFinite },
    )
    .map(lit);
}

/** Objects with members in random order and, often, duplicate keys (Python keeps the last value). */
function objectArb(key: fc.Arbitrary<string>, value: fc.Arbitrary<Node>, maxLength: number): fc.Arbitrary<Node> {
  return fc
    .tuple(
      fc.array(fc.tuple(key, value), { maxLength }),
      fc.oneof(
        { weight: 2, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(fc.tuple(fc.nat(), value), { minLength: 1, maxLength: 2 }) },
      ),
    )
    .map(([members, dups]): Node => {
      const out: (readonly [string, Node])[] = [...members];
      for (const [n, v] of dups) {
        const m = members[n % Math.max(1, members.length)];
        if (m !== undefined) out.splice(n % (out.length + 1), 0, [m[0], v]);
      }
      return { t: 'obj', members: out };
    });
}

function treeArb(flavor: Flavor): { value: fc.Arbitrary<Node>; array: fc.Arbitrary<Node> } {
  const leaf = leafArb(flavor);
  const key = keyArb(flavor);
  const tree = fc.letrec<{ value: Node; array: Node; object: Node }>((tie) => ({
    value: fc.oneof({ maxDepth: 5, depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 5 }).map((items): Node => ({ t: 'arr', items })),
    object: objectArb(key, tie('value'), 5),
  }));
  // Chains of 1..40 containers.
  const deep = fc
    .tuple(fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }), fc.oneof(leaf, tree.value), key)
    .map(([kinds, inner, k]) => chain(kinds.length, inner, (level) => (kinds[level] === true ? 'arr' : 'obj'), k));
  const value = fc.oneof({ weight: 12, arbitrary: tree.value }, { weight: 1, arbitrary: deep });
  return { value, array: tree.array };
}

/** A top-level object holding a chain that makes 250..258 nested containers in all (orjson stops at 255). */
const nearOrjsonLimit: fc.Arbitrary<Node> = fc
  .tuple(fc.integer({ min: 250, max: 258 }), fc.constantFrom('arr', 'obj', 'mixed'), fc.constantFrom('1', '[]', '{}', '"x"', '1.5'))
  .map(([total, shape, inner]) =>
    obj(['a', chain(total - 1, lit(inner), (level) => (shape === 'mixed' ? (level % 3 === 0 ? 'obj' : 'arr') : shape))], ['b', lit('0')]),
  );

const styleArb: fc.Arbitrary<Style> = fc.record({
  kind: fc.constantFrom<StyleKind>('compact', 'python', 'pretty', 'odd', 'canonical'),
  indent: fc.constantFrom('  ', '    ', '\t', ' ', ''),
  crlf: fc.boolean(),
  seed: fc.integer(),
});

type Mutation = { kind: 'truncate' | 'delete' | 'insert' | 'replace'; at: number; byte: number };
const MUTATION_BYTES = [
  0x00, 0x09, 0x0a, 0x1f, 0x20, 0x22, 0x2b, 0x2c, 0x2d, 0x2e, 0x30, 0x3a, 0x45, 0x5b, 0x5c, 0x5d, 0x65, 0x7b, 0x7d, 0x7f, 0x80, 0xbf, 0xc0,
  0xc1, 0xed, 0xef, 0xf4, 0xf5, 0xff,
];
const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom<Mutation['kind']>('truncate', 'delete', 'insert', 'replace'),
  at: fc.integer({ min: 0, max: 1_000_000 }),
  byte: fc.constantFrom(...MUTATION_BYTES),
});

function mutate(body: Buffer, m: Mutation): Buffer {
  const n = body.length;
  const at = Math.floor((m.at / 1_000_001) * (n + 1));
  switch (m.kind) {
    case 'truncate':
      return body.subarray(0, Math.min(at, Math.max(0, n - 1)));
    case 'delete':
      return Buffer.concat([body.subarray(0, at), body.subarray(at + 1)]);
    case 'insert':
      return Buffer.concat([body.subarray(0, at), Buffer.from([m.byte]), body.subarray(at)]);
    case 'replace': {
      const copy = Buffer.from(body);
      if (at < n) copy[at] = m.byte;
      return copy;
    }
  }
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface GeneratedBody {
  readonly body: Buffer;
  /** How it was made, for failure reports. */
  readonly note: string;
}

function bodyArb(flavor: Flavor): fc.Arbitrary<GeneratedBody> {
  const tree = treeArb(flavor);
  const key = keyArb(flavor);
  const rootObject = objectArb(key, tree.value, 8);
  const nonObject = fc.oneof(
    tree.array,
    leafArb(flavor),
    fc.constantFrom(lit(''), lit(' \n\t'), lit('{'), lit('{"a":1}{}'), lit('{"a" 1}'), lit("{'a':1}")),
  );
  return fc
    .record({
      root: fc.oneof(
        { weight: 100, arbitrary: rootObject },
        { weight: 4, arbitrary: nonObject },
        { weight: 1, arbitrary: nearOrjsonLimit },
      ),
      style: styleArb,
      bom: fc.oneof({ weight: 24, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      mutation: fc.oneof({ weight: 24, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: mutationArb }),
    })
    .map(({ root, style, bom, mutation }) => {
      let body = encodeText(render(root, style));
      if (bom) body = Buffer.concat([BOM, body]);
      if (mutation !== null) body = mutate(body, mutation);
      const note = `flavor=${flavor} style=${style.kind}${bom ? ' bom' : ''}${mutation === null ? '' : ` mutation=${JSON.stringify(mutation)}`}`;
      return { body, note };
    });
}

/** One generated body, with a note on what it exercises. */
export const generatedBodies: fc.Arbitrary<GeneratedBody> = fc.oneof(
  { weight: 85, arbitrary: bodyArb('clean') },
  { weight: 11, arbitrary: bodyArb('lone') },
  { weight: 4, arbitrary: bodyArb('raw') },
);

// ---------------------------------------------------------------------------------------------------
// Fixed regression cases (sent in the same batch)

export interface FixedCase {
  readonly name: string;
  readonly body: Buffer;
}

export function fixedCases(): FixedCase[] {
  const cases: FixedCase[] = [];
  const add = (name: string, body: string | Buffer): void => {
    cases.push({ name, body: typeof body === 'string' ? encodeText(body) : body });
  };
  const strings: Record<string, string> = {
    astral: '😀\u{10FFFF}\u{10000}',
    'escaped-pair-lower': '\\ud83d\\ude00',
    'escaped-pair-upper': '\\uD83D\\uDE00',
    controls: '\\u0000\\u001f\\u001F\\b\\f\\n\\r\\t\\u000b\\u007f',
    combining: 'e\u0301a\u0308\u0301\u0301',
    'line-separators': '\u2028\u2029\\u2028\\u2029',
    del: '\u007f\\u007f',
    'del-raw': 'a\u007fb',
    'private-use': '\ue000\uffff\\ue000\\uFFFF',
    solidus: '\\/a/b',
    'quote-backslash': '\\"\\\\',
    bom: '\ufeff\\ufeff',
    'lone-high': '\\ud800',
    'lone-low': '\\udc00',
    'high-then-nonlow': '\\ud800\\u0041',
    'high-then-high': '\\ud800\\ud800',
    'high-high-low': '\\ud800\\ud83d\\ude00',
    reversed: '\\udc00\\ud800',
    'high-then-char': '\\ud800x',
    'high-at-end': 'x\\ud83d',
    'raw-high': rawSurrogate(0xd800),
    'raw-low': rawSurrogate(0xdc00),
    'raw-cesu-pair': rawSurrogate(0xd83d) + rawSurrogate(0xde00),
    'escaped-high-raw-low': `\\ud83d${rawSurrogate(0xde00)}`,
    'raw-high-escaped-low': `${rawSurrogate(0xd83d)}\\ude00`,
  };
  for (const [name, s] of Object.entries(strings)) add(`string/${name}`, `{"s": "${s}", "k${s}": 1}`);
  // Invalid strings and bytes.
  add('string/raw-newline', '{"s":"a\nb"}');
  add('string/raw-tab', '{"s":"a\tb"}');
  add('string/bad-escape', '{"s":"\\x41"}');
  add('string/short-u', '{"s":"\\u12"}');
  add('string/upper-U', '{"s":"\\U0041"}');
  add('string/high-then-bad-hex', '{"s":"\\ud800\\uzzzz"}');
  add('string/unterminated-after-pair', '{"s":"\\ud83d\\ude00');
  for (const [name, bytes] of Object.entries({
    overlong: [0xc0, 0x80],
    'lone-continuation': [0x80],
    f5: [0xf5, 0x80, 0x80, 0x80],
    'truncated-3byte': [0xe2, 0x82],
    'truncated-surrogate': [0xed, 0xa0],
    'above-max': [0xf4, 0x90, 0x80, 0x80],
    'overlong-3byte': [0xe0, 0x80, 0x80],
    ff: [0xff],
  })) {
    add(`utf8/${name}`, Buffer.concat([Buffer.from('{"s":"'), Buffer.from(bytes), Buffer.from('"}')]));
  }
  // Integers.
  const ints: Record<string, string> = {
    zero: '0',
    'minus-zero': '-0',
    'two53-plus1': '9007199254740993',
    'minus-two53-plus1': '-9007199254740993',
    'u64-max': (TWO_64 - 1n).toString(),
    'u64-max-plus1': TWO_64.toString(),
    'i64-min': (-TWO_63).toString(),
    'i64-min-minus1': (-TWO_63 - 1n).toString(),
    'i64-max': (TWO_63 - 1n).toString(),
    'i64-max-plus1': TWO_63.toString(),
    '19-nines': '9999999999999999999',
    '100-digits': `1${'0'.repeat(99)}`,
    '4300-digits': `7${'1'.repeat(4299)}`,
    'minus-4300-digits': `-7${'1'.repeat(4299)}`,
    '4301-digits': `7${'1'.repeat(4300)}`,
    'minus-4301-digits': `-7${'1'.repeat(4300)}`,
    '5000-digits': `9${'9'.repeat(4999)}`,
  };
  for (const [name, v] of Object.entries(ints)) add(`int/${name}`, `{"n": ${v}, "a": [${v}]}`);
  add('int/leading-zero', '{"n": 01}');
  add('int/bare-minus', '{"n": -}');
  add('int/plus', '{"n": +1}');
  add('int/5000-digit-float', `{"n": ${'9'.repeat(5000)}.5}`);
  add('int/5000-digit-exp', `{"n": ${'1'.repeat(5000)}e-4990}`);
  // Floats.
  for (const f of SPECIAL_FLOATS) add(`float/${f.slice(0, 40)}`, `{"f": ${f}}`);
  // Runs of one lexeme (laid out once per run), then each again after another lexeme.
  add('float/repeated-runs', `{"f": [${SPECIAL_FLOATS.flatMap((f) => [f, f, f]).join(', ')}], "g": [${SPECIAL_FLOATS.join(', ')}]}`);
  for (const f of ['NaN', 'Infinity', '-Infinity']) add(`float/${f}`, `{"f": ${f}, "g": [${f}]}`);
  add('float/-NaN', '{"f": -NaN}');
  add('float/dot-no-digits', '{"f": 1.}');
  add('float/exp-no-digits', '{"f": 1e}');
  add('float/leading-dot', '{"f": .5}');
  add('float/min-subnormal-halfway', `{"f": ${midpointLexeme(0, 0).replace(/^-/, '')}}`);
  add(
    'float/min-subnormal-midpoint',
    `{"f": ${midpointLexeme(5e-324, 0)}, "g": ${midpointLexeme(5e-324, 1)}, "h": ${midpointLexeme(5e-324, -1)}}`,
  );
  add('float/max-midpoint', `{"f": ${midpointLexeme(Number.MAX_VALUE, 0)}, "g": ${midpointLexeme(Number.MAX_VALUE, -1)}}`);
  add('float/one-midpoint', `{"f": ${midpointLexeme(1, 0)}, "g": ${midpointLexeme(1, 1)}, "h": ${midpointLexeme(1, -1)}}`);
  add('float/2^-1075', `{"f": ${(5n ** 1075n).toString()}e-1075, "g": ${(5n ** 1075n).toString()}1e-1076}`);
  // Keys.
  add('keys/integer-like', '{"10": 1, "2": 2, "1": 3, "01": 4, "-1": 5}');
  add('keys/prototype', '{"__proto__": {"a": 1}, "constructor": 2, "prototype": 3, "toString": 4, "hasOwnProperty": 5}');
  add('keys/empty', '{"": 0, " ": 1}');
  add('keys/astral-vs-private-use', '{"😀": 1, "\ue000": 2, "\uffff": 3, "\u{10000}": 4, "\ue000x": 5, "\u{10000}x": 6}');
  add('keys/astral-vs-private-use-escaped', '{"\\ud83d\\ude00": 1, "\\ue000": 2, "\\uffff": 3, "\\ud800\\udc00": 4}');
  add('keys/duplicate', '{"a": 1, "a": 2}');
  add('keys/duplicate-interleaved', '{"a": 1, "b": 0, "a": 2, "c": 3, "a": [3]}');
  add('keys/duplicate-spellings', '{"😀": 1, "\\ud83d\\ude00": 2, "é": 3, "\\u00e9": 4, "a": 5, "\\u0061": 6}');
  add('keys/duplicate-proto', '{"__proto__": 1, "__proto__": 2}');
  add('keys/cesu-vs-astral', `{"\\ud83d\\ude00": 1, "${rawSurrogate(0xd83d)}${rawSurrogate(0xde00)}": 2, "\ue000": 3}`);
  add('keys/lone-vs-astral', '{"\\ud83d": 1, "😀": 2, "\\ud83d\\ud83d": 3, "\ue000": 4, "\\udfff": 5}');
  add('keys/lone-duplicate', '{"\\ud800": 1, "\\uD800": 2}');
  // Nesting.
  add('depth/40', `{"a": ${'['.repeat(39)}${']'.repeat(39)}}`);
  for (const total of [254, 255, 256, 257]) {
    add(`depth/${total}-arrays`, `{"a": ${'['.repeat(total - 1)}1${']'.repeat(total - 1)}}`);
    add(`depth/${total}-objects`, `${'{"a": '.repeat(total)}1${'}'.repeat(total)}`);
    add(`depth/${total}-top-array`, `${'['.repeat(total)}${']'.repeat(total)}`);
  }
  add('depth/empty-containers', '{"a": {}, "b": [], "c": [{}, [[]], {"d": {}}]}');
  // Body styles.
  const payload = obj(
    ['b', lit('1.0')],
    ['a', arr(lit('1e16'), lit('"é😀"'), lit('null'), obj())],
    ['é', obj(['y', lit('true')], ['x', lit('-0.0')])],
  );
  for (const kind of ['compact', 'python', 'pretty', 'odd', 'canonical'] as const) {
    add(`style/${kind}`, render(payload, { kind, indent: '  ', crlf: false, seed: 7 }));
  }
  add('style/pretty-tabs-crlf', render(payload, { kind: 'pretty', indent: '\t', crlf: true, seed: 1 }));
  add('style/bom', Buffer.concat([BOM, Buffer.from('{"a": 1}')]));
  add('style/bom-whitespace', Buffer.concat([BOM, Buffer.from(' \r\n\t{"a": 1} \n')]));
  add('style/double-bom', Buffer.concat([BOM, BOM, Buffer.from('{"a": 1}')]));
  add('style/bom-only', BOM);
  add('style/empty', '');
  add('style/whitespace-only', ' \t\r\n');
  add('style/utf16le-bom', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a": 1}', 'utf16le')]));
  add('style/utf16le-no-bom', Buffer.from('{"a": 1}', 'utf16le'));
  add('style/vertical-tab', '{"a":\u000b1}');
  add('style/nbsp', '{"a":\u00a01}');
  for (const top of ['[1]', '"s"', '1', '1.5', 'null', 'true', 'NaN', '[]']) add(`top/${top}`, top);
  return cases;
}
