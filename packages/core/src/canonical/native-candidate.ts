import { isAscii, isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import { pythonFloatRepr } from './float-digits.js';
import { asBuffer } from './strings.js';
import type { JsonObject } from './to-value.js';

/**
 * The python profile's canonical form written by the engine's own JSON: one `JSON.parse`, a copy
 * with each object's keys sorted, `JSON.stringify(copy, null, 2)`, one hash. Where Python and
 * JavaScript write a body alike this is the exact form at native speed, and the parse is the
 * payload, so escapes are decoded once. Wherever they could differ it answers `undefined` and the
 * exact path decides, so it never accepts a body the exact path refuses:
 *
 * - bytes: not UTF-8 (Python takes encoded surrogates, `JSON.parse` would read U+FFFD), `NaN`,
 *   `Infinity`, a top level other than an object, nesting beyond `maxDepth`, a canonical size that
 *   could exceed `maxCanonicalBytes` (checked on a bound, before anything is parsed);
 * - numbers: integers of more than 15 digits or `-0` (doubles round them, `json.loads` does not),
 *   floats that overflow; a float lexeme the engine would spell differently from Python's `repr`
 *   (integral values such as `1.0`, magnitudes below 1e-4 or from 1e16) is written by `repr` instead,
 *   through a string marker replaced in the output;
 * - keys: `__proto__`, array-index keys (objects order them first), keys with a UTF-16 unit from
 *   U+D800 up (code-unit and code-point order can differ);
 * - strings: a lone surrogate (`JSON.stringify` escapes it, the python profile has no form for it),
 *   and, when markers are needed, any `\u0000` in the body.
 *
 * The structure scan that finds the number lexemes also bounds how much of a body this may read
 * before giving up: past {@link NATIVE_ALWAYS_BYTES}, a body dense in tokens (numbers, keys) is
 * left to the exact path, which is faster there; text-heavy bodies (long escaped strings) go on.
 * @internal
 */
export function nativePythonCandidate(body: Uint8Array, maxDepth: number, maxCanonicalBytes: number): NativeCandidate | undefined {
  const buf = asBuffer(body);
  if (!isUtf8(buf)) return undefined;
  const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  const text = buf.toString('utf8', bom);
  const scan = scanStructure(text, maxDepth, buf.length > NATIVE_ALWAYS_BYTES);
  // The parse's bound: per body byte at most 9 bytes of lexeme, 2 + 2 × depth of indentation and
  // separators per member, 3 + 2 × depth per container (see canonical-bound.test.ts).
  if (scan === undefined || buf.length * (16 + 3 * scan.depth) > maxCanonicalBytes) return undefined;
  const marked = scan.edits.length > 0;
  if (marked && text.includes('\\u0000')) return undefined; // a body string could look like a marker
  let payload: unknown;
  try {
    payload = JSON.parse(marked ? applyEdits(text, scan.edits) : text);
  } catch {
    return undefined;
  }
  // An ASCII body without \uD…–\uF… escapes has no UTF-16 unit from U+D800 up in any key.
  const copier = new SortedCopier(marked, !isAscii(buf) || HIGH_UNIT_ESCAPE.test(text));
  const sorted = copier.object(payload as Record<string, unknown>);
  if (copier.doubtful || copier.markers !== scan.edits.length / 3) return undefined;
  let canonical = JSON.stringify(sorted, null, 2);
  if (marked) canonical = canonical.replace(MARKER_IN_OUTPUT, '$1');
  // A lone surrogate is written \udXXX; so is a backslash followed by "ud" (written \\ud): either way, the exact path.
  if (canonical.includes('\\ud')) return undefined;
  return { digest: hash('sha256', canonical, 'hex'), payload: payload as JsonObject };
}

/**
 * Whether the native candidate is worth trying first on `body`: it holds `\u` escapes (Python's
 * default `ensure_ascii` writes every character beyond ASCII so) and is at least
 * {@link NATIVE_MIN_BYTES} long. There the exact path decodes each escape in JavaScript, three times,
 * and the engine's `JSON.parse` once: a 100 KB chat body verifies in 0.6× the time. Below that size,
 * or without escapes, the exact path is the faster of the two (measured per body shape, µs:
 * 1 KB webhook 15.7 exact against 18.3 native; 3 KB with escaped text 25.4 against 27.1; 9 KB of
 * ASCII text 35.1 against 54.1; 9 KB of escaped text 52.0 against 48.9), and a failed native try would
 * cost its time on top of the exact path's.
 * @internal
 */
export function nativeFirstPays(body: Uint8Array): boolean {
  return body.length >= NATIVE_MIN_BYTES && Buffer.from(body.buffer, body.byteOffset, body.byteLength).includes(ESCAPE_OPENING);
}

/** Smallest body {@link nativeFirstPays} sends to the native candidate first. @internal */
export const NATIVE_MIN_BYTES = 8 * 1024;
const ESCAPE_OPENING = Buffer.from('\\u', 'latin1');

/** What {@link nativePythonCandidate} found. @internal */
export interface NativeCandidate {
  /** Lowercase SHA-256 hex of the python profile's canonical bytes. */
  readonly digest: string;
  /** The body's value, as `toValue` builds it for this body. */
  readonly payload: JsonObject;
}

/** Bodies up to this size are always tried natively; larger ones only while their tokens are sparse. @internal */
export const NATIVE_ALWAYS_BYTES = 16 * 1024;
/** Past {@link NATIVE_ALWAYS_BYTES}: at most this many tokens plus one per {@link SPARSE_BYTES_PER_TOKEN} bytes read. */
const SPARSE_TOKENS = 256;
const SPARSE_BYTES_PER_TOKEN = 256;

/** An escape of a UTF-16 unit from U+D800 up (or a backslash before such text: then keys are checked one by one). */
const HIGH_UNIT_ESCAPE = /\\u[d-fD-F]/;

/** A marker in the output: `"\u0000` + the `repr` text + `"`. */
const MARKER_IN_OUTPUT = /"\\u0000([^"]*)"/g;

/** What the structure scan found. */
interface Scan {
  /** Deepest nesting (top-level object = 1). */
  readonly depth: number;
  /** The float lexemes to write by `repr`, in body order, as flat triples: start, end, `repr` text. */
  readonly edits: (number | string)[];
}

/** The text with each edited lexeme replaced by a JSON string `"\u0000<repr>"`. */
function applyEdits(text: string, edits: readonly (number | string)[]): string {
  let out = '';
  let last = 0;
  for (let e = 0; e < edits.length; e += 3) {
    const start = edits[e] as number;
    out += `${text.slice(last, start)}"\\u0000${edits[e + 2] as string}"`;
    last = edits[e + 1] as number;
  }
  return out + text.slice(last);
}

// What the scan expects next.
const VALUE = 0;
const VALUE_OR_CLOSE = 1;
const KEY = 2;
const KEY_OR_CLOSE = 3;
const COLON = 4;
const AFTER = 5;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * Walks the structure of `text` (strings skipped by searching their closing quote) to find every
 * number lexeme and the nesting depth. Any deviation from JSON's grammar outside strings, or a
 * lexeme this path does not write, answers `undefined`; `sparse` also gives up on dense bodies.
 * Number lexemes are replaced only in value position, by a string, so the edited text is valid
 * JSON exactly when the body is.
 */
function scanStructure(text: string, maxDepth: number, sparse: boolean): Scan | undefined {
  const n = text.length;
  const edits: (number | string)[] = [];
  const inObject: boolean[] = [];
  let object = false;
  let depth = 0;
  let deepest = 0;
  let tokens = 0;
  let expect = VALUE;
  let p = 0;
  for (;;) {
    let c = text.charCodeAt(p);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++p);
    if (p >= n) return undefined; // unfinished
    if (sparse && ++tokens > SPARSE_TOKENS + p / SPARSE_BYTES_PER_TOKEN) return undefined;
    switch (expect) {
      case VALUE:
      case VALUE_OR_CLOSE:
        if (c === 0x22) {
          p = stringEnd(text, p);
          if (p < 0) return undefined;
          expect = AFTER;
        } else if (c === 0x7b || c === 0x5b) {
          if (depth === 0 && c !== 0x7b) return undefined; // the top level must be an object
          if (++depth > maxDepth) return undefined;
          if (depth > deepest) deepest = depth;
          inObject.push(object);
          object = c === 0x7b;
          expect = object ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
          p++;
        } else if (c === 0x5d && expect === VALUE_OR_CLOSE) {
          p++;
          object = inObject.pop()!;
          if (--depth === 0) return end(text, p, deepest, edits);
          expect = AFTER;
        } else if (depth === 0) {
          return undefined;
        } else if (c === 0x2d || isDigit(c)) {
          p = number(text, p, edits);
          if (p < 0) return undefined;
          expect = AFTER;
        } else if (c === 0x74 && text.startsWith('true', p)) {
          p += 4;
          expect = AFTER;
        } else if (c === 0x66 && text.startsWith('false', p)) {
          p += 5;
          expect = AFTER;
        } else if (c === 0x6e && text.startsWith('null', p)) {
          p += 4;
          expect = AFTER;
        } else {
          return undefined; // NaN, Infinity, or not JSON
        }
        break;
      case KEY:
      case KEY_OR_CLOSE:
        if (c === 0x22) {
          p = stringEnd(text, p);
          if (p < 0) return undefined;
          expect = COLON;
        } else if (c === 0x7d && expect === KEY_OR_CLOSE) {
          p++;
          object = inObject.pop()!;
          if (--depth === 0) return end(text, p, deepest, edits);
          expect = AFTER;
        } else {
          return undefined;
        }
        break;
      case COLON:
        if (c !== 0x3a) return undefined;
        p++;
        expect = VALUE;
        break;
      default: // AFTER
        if (c === 0x2c) {
          p++;
          expect = object ? KEY : VALUE;
        } else if (c === (object ? 0x7d : 0x5d)) {
          p++;
          object = inObject.pop()!;
          if (--depth === 0) return end(text, p, deepest, edits);
        } else {
          return undefined;
        }
    }
  }
}

/** After the top-level object: only whitespace may follow. */
function end(text: string, p: number, depth: number, edits: (number | string)[]): Scan | undefined {
  const n = text.length;
  for (; p < n; p++) {
    const c = text.charCodeAt(p);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return undefined;
  }
  return { depth, edits };
}

/** The index after the string whose opening quote is at `p` (its closing quote: the first not escaped), or -1. */
function stringEnd(text: string, p: number): number {
  let q = text.indexOf('"', p + 1);
  while (q >= 0) {
    let k = q - 1;
    while (text.charCodeAt(k) === 0x5c) k--;
    if (((q - 1 - k) & 1) === 0) return q + 1;
    q = text.indexOf('"', q + 1);
  }
  return -1;
}

/**
 * Scans the number lexeme at `p` by JSON's grammar; returns the index after it, or -1 when this path
 * does not write it. A float whose engine spelling is not Python's `repr` is recorded in `edits`.
 */
function number(text: string, p: number, edits: (number | string)[]): number {
  const start = p;
  if (text.charCodeAt(p) === 0x2d) p++;
  const intStart = p;
  let c = text.charCodeAt(p);
  if (c === 0x30) p++;
  else if (c >= 0x31 && c <= 0x39) while (isDigit(text.charCodeAt(++p)));
  else return -1;
  const intDigits = p - intStart;
  let fracLen = 0;
  let exponent = false;
  if (text.charCodeAt(p) === 0x2e) {
    if (!isDigit(text.charCodeAt(p + 1))) return -1;
    const fracStart = ++p;
    while (isDigit(text.charCodeAt(++p)));
    fracLen = p - fracStart;
  }
  c = text.charCodeAt(p);
  if (c === 0x65 || c === 0x45) {
    c = text.charCodeAt(++p);
    if (c === 0x2b || c === 0x2d) c = text.charCodeAt(++p);
    if (!isDigit(c)) return -1;
    while (isDigit(text.charCodeAt(++p)));
    exponent = true;
  }
  if (fracLen === 0 && !exponent) {
    // An integer: doubles hold every one of up to 15 digits; -0 reads as 0 in Python.
    if (intDigits > 15 || (intDigits === 1 && start !== intStart && text.charCodeAt(intStart) === 0x30)) return -1;
    return p;
  }
  if (!exponent && intDigits + fracLen <= 15) {
    // Up to 15 significant digits: the double is non-integral exactly when a fraction digit is not 0.
    const fracStart = intStart + intDigits + 1;
    let firstNonZero = fracStart;
    while (firstNonZero < p && text.charCodeAt(firstNonZero) === 0x30) firstNonZero++;
    if (firstNonZero === p) {
      // Integral: repr writes the integer digits and ".0", the engine the integer alone.
      edits.push(start, p, `${text.slice(start, intStart + intDigits)}.0`);
      return p;
    }
    // From 1e-4 up both print the shortest digits in fixed notation; below, repr uses an exponent.
    if (intDigits > 1 || text.charCodeAt(intStart) !== 0x30 || firstNonZero - fracStart < 4) return p;
  }
  const x = Number(text.slice(start, p));
  if (!Number.isFinite(x)) return -1;
  const magnitude = Math.abs(x);
  if (Number.isInteger(x) || magnitude < 1e-4) edits.push(start, p, pythonFloatRepr(x));
  return p;
}

/** Array-index keys (integers up to 2^32 − 2, no leading zero): objects list them first, in numeric order. */
function isArrayIndex(key: string): boolean {
  const n = key.length;
  if (n > 10) return false;
  if (key === '0') return true;
  if (key.charCodeAt(0) === 0x30) return false;
  for (let i = 0; i < n; i++) if (!isDigit(key.charCodeAt(i))) return false;
  return Number(key) <= 2 ** 32 - 2;
}

/**
 * Copies the parsed body with each object's keys in sorted order, noting anything this path does
 * not write as Python would ({@link doubtful}), and turning markers back into numbers in the parse
 * (the payload) while the copy keeps them for the output.
 */
class SortedCopier {
  doubtful = false;
  /** Markers met (a duplicate key can drop one: then the counts differ and the exact path decides). */
  markers = 0;

  constructor(
    private readonly marked: boolean,
    /** Whether a key can hold a unit from U+D800 up (then each key is looked at). */
    private readonly highUnits: boolean,
  ) {}

  object(o: Record<string, unknown>): Record<string, unknown> {
    const keys = Object.keys(o);
    const out: Record<string, unknown> = {};
    for (let m = 0; m < keys.length; m++) {
      if (this.doubtfulKey(keys[m]!)) {
        this.doubtful = true;
        return out;
      }
    }
    keys.sort();
    for (let m = 0; m < keys.length; m++) {
      const key = keys[m]!;
      const v = o[key];
      if (typeof v === 'object' && v !== null) {
        out[key] = Array.isArray(v) ? this.array(v) : this.object(v as Record<string, unknown>);
      } else {
        out[key] = v;
        if (this.marked && typeof v === 'string' && v.charCodeAt(0) === 0) o[key] = this.marker(v);
      }
    }
    return out;
  }

  private array(a: unknown[]): unknown[] {
    const out = a.slice();
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      if (typeof v === 'object' && v !== null) {
        out[i] = Array.isArray(v) ? this.array(v) : this.object(v as Record<string, unknown>);
      } else if (this.marked && typeof v === 'string' && v.charCodeAt(0) === 0) {
        a[i] = this.marker(v);
      }
    }
    return out;
  }

  /** The number a marker stands for (its `repr`, which reads back as the same double). */
  private marker(v: string): number {
    this.markers++;
    return Number(v.slice(1));
  }

  private doubtfulKey(key: string): boolean {
    // Units from U+D800 up sort differently by UTF-16 (JavaScript) and by code point (Python): checked
    // first, whatever the key starts with ("1😀" and "1\uFF01" swap places).
    if (this.highUnits) for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) >= 0xd800) return true;
    if (isDigit(key.charCodeAt(0))) return isArrayIndex(key);
    return key === '__proto__';
  }
}
