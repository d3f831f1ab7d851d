import { isUtf8 } from 'node:buffer';
import { JobhookError } from '../errors.js';
import {
  F_DEL,
  F_FLT_LAYOUT,
  F_FLT_REPR,
  F_DOC_BIGINT,
  F_DOC_FLOAT,
  F_DOC_NEG_ZERO_INT,
  F_DOC_NONFINITE,
  F_ESC,
  F_LONE,
  F_NONASCII,
  F_RAWSURR,
  T_ARR,
  T_FALSE,
  T_FLT,
  T_INF,
  T_INT,
  T_NAN,
  T_NINF,
  T_NULL,
  T_OBJ,
  T_STR,
  T_TRUE,
  type ParsedBody,
} from './tape.js';

/** Default for `maxDepth`: far above any real payload, far below what overflows a stack. */
export const DEFAULT_MAX_DEPTH = 512;
/** Largest `maxDepth` accepted: parsing and serializing recurse once per level. */
export const MAX_MAX_DEPTH = 2000;
/** Default for `maxBodyBytes`: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/**
 * Default ratio of `maxCanonicalBytes` to `maxBodyBytes`. Real payloads measure 1.2–2.3× (the
 * service's own bodies), 3.2× (a compact object-detection body), 6.5× (a compact vector of small
 * integers); 16× leaves room above all of them, since the service never retries a refusal.
 */
export const CANONICAL_BYTES_PER_BODY_BYTE = 16;
/**
 * Python 3.11+ refuses to convert integer strings longer than this (`sys.int_info.default_max_str_digits`),
 * so `json.loads` fails on them and no signer can have produced them.
 */
export const PYTHON_MAX_INT_DIGITS = 4300;

/** Options of {@link parseBody}. */
export interface ParseOptions {
  /** Bodies longer than this fail with `ERR_BODY_TOO_LARGE`. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Containers nested deeper than this fail with `ERR_BODY_TOO_DEEP` (top-level object = 1). Default 512. */
  maxDepth?: number;
  /**
   * Bodies whose canonical form may exceed this many bytes fail with `ERR_CANONICAL_TOO_LARGE`
   * (413) before anything is serialized: indentation grows with depth, so a small body can have a
   * huge canonical form (1 MB of nested `[]` → 500 MB). The parse computes an upper bound of every
   * profile's size. Default 16 × `maxBodyBytes` (16 MiB).
   */
  maxCanonicalBytes?: number;
}

/** {@link ParseOptions} checked and filled in. @internal */
export interface ResolvedParseOptions {
  readonly maxBodyBytes: number;
  readonly maxDepth: number;
  readonly maxCanonicalBytes: number;
}

/** How {@link parseBodyUnchecked} runs. @internal */
export interface ParseRun extends ResolvedParseOptions {
  /** Refuse a top-level value that is not an object (`ERR_BODY_NOT_OBJECT`). Default true. */
  readonly requireObject?: boolean;
  /** Parse into the shared scratch tape: only for callers that drop the parse before returning. */
  readonly scratch?: boolean;
  /**
   * Verification: try the python profile through the engine's own JSON first, where it writes the
   * body as Python does (`nativePythonCandidate`). Default: where that pays (`nativeFirstPays`:
   * bodies of 8 KB or more that hold `\u` escapes); true: always (the differential tests); false:
   * the exact path alone.
   */
  readonly nativeFirst?: boolean;
}

/** Limits for trusted input (values the caller built, bodies it signs): no size limits, default depth. @internal */
export const TRUSTED_INPUT: ResolvedParseOptions = Object.freeze({
  maxBodyBytes: Number.MAX_SAFE_INTEGER,
  maxDepth: DEFAULT_MAX_DEPTH,
  maxCanonicalBytes: Number.MAX_SAFE_INTEGER,
});

// Byte classes inside a string: 0 plain ASCII, 1 quote, 2 backslash, 3 control, 4 non-ASCII, 5 DEL.
const STRING_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_CLASS[c] = 3;
STRING_CLASS[0x22] = 1;
STRING_CLASS[0x5c] = 2;
STRING_CLASS[0x7f] = 5;
for (let c = 0x80; c < 0x100; c++) STRING_CLASS[c] = 4;

// Value of a hex digit, or 255.
const HEX = new Uint8Array(256).fill(255);
for (let c = 0; c < 10; c++) HEX[0x30 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX[0x41 + c] = 10 + c;
  HEX[0x61 + c] = 10 + c;
}

const SIMPLE_ESCAPES = new Uint8Array(256);
for (const ch of '"\\/bfnrt') SIMPLE_ESCAPES[ch.charCodeAt(0)] = 1;

/**
 * Validates options shared by everything that parses a body; throws `ERR_OPTION_INVALID`.
 * @internal
 */
export function resolveParseOptions(options: ParseOptions, owner: string): ResolvedParseOptions {
  const { maxBodyBytes = DEFAULT_MAX_BODY_BYTES, maxDepth = DEFAULT_MAX_DEPTH } = options;
  const maxCanonicalBytes = options.maxCanonicalBytes ?? Math.min(Number.MAX_SAFE_INTEGER, maxBodyBytes * CANONICAL_BYTES_PER_BODY_BYTE);
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 2) {
    throw new JobhookError('ERR_OPTION_INVALID', `${owner}: maxBodyBytes must be an integer >= 2, got ${String(maxBodyBytes)}`);
  }
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1 || maxDepth > MAX_MAX_DEPTH) {
    throw new JobhookError(
      'ERR_OPTION_INVALID',
      `${owner}: maxDepth must be an integer from 1 to ${MAX_MAX_DEPTH}, got ${String(maxDepth)}`,
    );
  }
  if (!Number.isSafeInteger(maxCanonicalBytes) || maxCanonicalBytes < 2) {
    throw new JobhookError('ERR_OPTION_INVALID', `${owner}: maxCanonicalBytes must be an integer >= 2, got ${String(maxCanonicalBytes)}`);
  }
  return { maxBodyBytes, maxDepth, maxCanonicalBytes };
}

/**
 * Parses body bytes exactly as Python's `json.loads(body)` accepts them, without decoding anything:
 * UTF-8 only (a leading UTF-8 BOM is skipped, as `json.loads` does for bytes; UTF-16/32 bodies are
 * refused), strict UTF-8 except that encoded surrogates are accepted (`surrogatepass`), control
 * characters refused inside strings, `NaN`/`Infinity`/`-Infinity` accepted, integers of at most 4300
 * digits, duplicate keys kept on the tape (the serializers keep the last, as a Python dict does).
 *
 * @throws JobhookError `ERR_BODY_TOO_LARGE`, `ERR_CANONICAL_TOO_LARGE`, `ERR_BODY_MALFORMED`, `ERR_BODY_TOO_DEEP`, `ERR_BODY_NOT_OBJECT`.
 */
export function parseBody(body: Uint8Array, options: ParseOptions = {}): ParsedBody {
  return parseBodyUnchecked(body, resolveParseOptions(options, 'parseBody'));
}

/** {@link parseBody} with options already validated. @internal */
export function parseBodyUnchecked(body: Uint8Array, run: ParseRun): ParsedBody {
  const { maxBodyBytes, maxDepth, maxCanonicalBytes, requireObject = true, scratch = false } = run;
  if (body.length > maxBodyBytes) {
    throw new JobhookError('ERR_BODY_TOO_LARGE', `body has ${body.length} bytes; the limit is ${maxBodyBytes}`, {
      detail: { bytes: body.length, limit: maxBodyBytes },
    });
  }
  const parser = new Parser(body, maxDepth, maxCanonicalBytes, scratch ? SCRATCH.tape : undefined);
  const doc = parser.parseDocument(requireObject);
  if (scratch && doc.tape.length <= SCRATCH_MAX_INTS) SCRATCH.tape = doc.tape;
  return doc;
}

/**
 * One tape reused by the synchronous callers that never let the parse escape (canonicalize, verify):
 * allocating a typed array per request costs more than parsing a small body. Bounded, so one huge
 * body does not pin its tape.
 */
const SCRATCH: { tape: Int32Array } = { tape: new Int32Array(4096) };
const SCRATCH_MAX_INTS = 1 << 20;

/**
 * For a float lexeme "I.F" (no exponent): {@link F_FLT_REPR} when it is already `repr`'s form of its
 * value (Python's fixed layout, at most 15 significant digits), {@link F_FLT_LAYOUT} when it has
 * that layout with 16–17 digits (`repr`'s form if it is the shortest, which whoever wrote it with a
 * shortest-digits printer made sure of), else 0. Decided here from the digits the scan just passed,
 * so the serializers copy such floats without reading them again.
 */
function plainFloatLayout(b: Uint8Array, intStart: number, intDigits: number, fracLen: number): number {
  const fracStart = intStart + intDigits + 1;
  const last = b[fracStart + fracLen - 1];
  if (last === 0x30 && fracLen !== 1) return 0; // a trailing zero repr would not write
  let n: number;
  if (b[intStart] !== 0x30) {
    if (intDigits > 16) return 0; // decpt > 16: exponent notation
    n = intDigits + fracLen;
  } else {
    let lead = 0;
    while (lead < fracLen && lead < 4 && b[fracStart + lead] === 0x30) lead++;
    if (lead === fracLen) return fracLen === 1 ? F_FLT_REPR : 0; // "0.0" (and "-0.0")
    if (lead === 4) return 0; // decpt <= -4: exponent notation
    n = fracLen - lead;
  }
  return n <= 15 ? F_FLT_REPR : n <= 17 ? F_FLT_LAYOUT : 0;
}

/** From this many bytes a run of text is validated natively (below, the call costs more than the walk). */
const NATIVE_UTF8_MIN = 32;

class Parser {
  private readonly b: Uint8Array;
  private readonly n: number;
  private pos = 0;
  private tape: Int32Array;
  private len = 0;
  private readonly maxDepth: number;
  private deepest = 0;
  /** Surrogate flags of the string being scanned, set by `escape` and `utf8`. */
  private surrogateFlags = 0;
  /** OR of every string's flags, and the F_DOC_* features. */
  private features = 0;
  /**
   * Upper bound of the canonical size in every profile, in bytes, kept as the parse goes: each
   * value's lexeme bound plus its line break and indentation (known exactly from the depth).
   */
  private bound = 0;
  private readonly maxCanonicalBytes: number;

  constructor(bytes: Uint8Array, maxDepth: number, maxCanonicalBytes: number, tape: Int32Array | undefined) {
    this.b = bytes;
    this.n = bytes.length;
    this.maxDepth = maxDepth;
    this.maxCanonicalBytes = maxCanonicalBytes;
    // About one entry per 8 body bytes is typical of JSON; the tape grows when it is not enough.
    this.tape = tape ?? new Int32Array(Math.max(48, Math.ceil(bytes.length / 8) * 3));
  }

  parseDocument(requireObject: boolean): ParsedBody {
    const b = this.b;
    if (this.n >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) this.pos = 3;
    this.skipWs();
    if (this.pos >= this.n) this.fail('Expecting value: the body is empty');
    this.value(0);
    this.skipWs();
    if (this.pos < this.n) this.fail('Extra data after the JSON value');
    if (requireObject && this.tape[0] !== T_OBJ) {
      throw new JobhookError('ERR_BODY_NOT_OBJECT', 'the body is JSON but not a JSON object');
    }
    this.checkBound();
    return {
      bytes: b,
      tape: this.tape,
      tapeLength: this.len,
      depth: this.deepest,
      features: this.features,
      canonicalBound: this.bound,
    };
  }

  private checkBound(): void {
    if (this.bound > this.maxCanonicalBytes) {
      throw new JobhookError(
        'ERR_CANONICAL_TOO_LARGE',
        `the canonical form of this body may reach ${this.bound} bytes; the limit is ${this.maxCanonicalBytes}`,
        { detail: { offset: this.pos, bound: this.bound, limit: this.maxCanonicalBytes } },
      );
    }
  }

  private fail(message: string): never {
    throw new JobhookError('ERR_BODY_MALFORMED', `${message} (byte ${this.pos})`, { detail: { offset: this.pos } });
  }

  private push(kind: number, a: number, bEnd: number): number {
    let tape = this.tape;
    const at = this.len;
    if (at + 3 > tape.length) {
      const grown = new Int32Array(tape.length * 2);
      grown.set(tape);
      this.tape = tape = grown;
    }
    tape[at] = kind;
    tape[at + 1] = a;
    tape[at + 2] = bEnd;
    this.len = at + 3;
    return at;
  }

  private skipWs(): void {
    const b = this.b;
    let p = this.pos;
    for (;;) {
      const c = b[p];
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  private value(depth: number): void {
    const c = this.b[this.pos];
    switch (c) {
      case 0x7b: // {
        this.object(depth + 1);
        return;
      case 0x5b: // [
        this.array(depth + 1);
        return;
      case 0x22: // "
        this.string();
        return;
      case 0x74: // t
        this.literal('true', T_TRUE);
        return;
      case 0x66: // f
        this.literal('false', T_FALSE);
        return;
      case 0x6e: // n
        this.literal('null', T_NULL);
        return;
      case 0x4e: // N
        this.literal('NaN', T_NAN);
        return;
      case 0x49: // I
        this.literal('Infinity', T_INF);
        return;
      default:
        if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
          this.number();
          return;
        }
        this.fail(c === undefined ? 'Expecting value: unexpected end of body' : 'Expecting value');
    }
  }

  private enter(depth: number): void {
    if (depth > this.maxDepth) {
      throw new JobhookError('ERR_BODY_TOO_DEEP', `the body nests deeper than ${this.maxDepth} levels`, {
        detail: { offset: this.pos, limit: this.maxDepth },
      });
    }
    if (depth > this.deepest) this.deepest = depth;
    // Checked at every container, so a body built to blow up stops the parse early.
    this.checkBound();
  }

  /**
   * A container at `depth` with `count` members: brackets, and per member a separator, a line
   * break and 2 × depth spaces, plus the line break and indentation before the closing bracket.
   */
  private containerBound(depth: number, count: number): void {
    this.bound += count === 0 ? 2 : 2 + count * (2 + 2 * depth) + 1 + 2 * (depth - 1);
  }

  private object(depth: number): void {
    this.enter(depth);
    const at = this.push(T_OBJ, 0, 0);
    const b = this.b;
    this.pos++;
    this.skipWs();
    let count = 0;
    if (b[this.pos] === 0x7d) {
      this.pos++;
    } else {
      for (;;) {
        if (b[this.pos] !== 0x22) this.fail('Expecting property name enclosed in double quotes');
        this.string();
        this.skipWs();
        if (b[this.pos] !== 0x3a) this.fail("Expecting ':' delimiter");
        this.bound += 2; // ": " after the key
        this.pos++;
        this.skipWs();
        this.value(depth);
        count++;
        this.skipWs();
        const c = b[this.pos];
        if (c === 0x2c) {
          this.pos++;
          this.skipWs();
        } else if (c === 0x7d) {
          this.pos++;
          break;
        } else {
          this.fail("Expecting ',' delimiter");
        }
      }
    }
    this.tape[at + 1] = count;
    this.tape[at + 2] = this.len;
    this.containerBound(depth, count);
  }

  private array(depth: number): void {
    this.enter(depth);
    const at = this.push(T_ARR, 0, 0);
    const b = this.b;
    this.pos++;
    this.skipWs();
    let count = 0;
    if (b[this.pos] === 0x5d) {
      this.pos++;
    } else {
      for (;;) {
        this.value(depth);
        count++;
        this.skipWs();
        const c = b[this.pos];
        if (c === 0x2c) {
          this.pos++;
          this.skipWs();
        } else if (c === 0x5d) {
          this.pos++;
          break;
        } else {
          this.fail("Expecting ',' delimiter");
        }
      }
    }
    this.tape[at + 1] = count;
    this.tape[at + 2] = this.len;
    this.containerBound(depth, count);
  }

  private literal(word: string, kind: number): void {
    const b = this.b;
    const p = this.pos;
    for (let i = 0; i < word.length; i++) {
      if (b[p + i] !== word.charCodeAt(i)) this.fail('Expecting value');
    }
    this.pos = p + word.length;
    if (kind >= T_NAN) this.features |= F_DOC_NONFINITE;
    this.bound += 9; // "-Infinity", the longest spelling of any literal in any profile
    this.push(kind, 0, 0);
  }

  private number(): void {
    const b = this.b;
    const start = this.pos;
    let p = start;
    if (b[p] === 0x2d) {
      p++;
      if (b[p] === 0x49) {
        this.pos = p;
        this.literal('Infinity', T_NINF);
        return;
      }
    }
    const intStart = p;
    let c = b[p];
    if (c === 0x30) {
      p++;
    } else if (c !== undefined && c >= 0x31 && c <= 0x39) {
      p++;
      while ((c = b[p]) !== undefined && c >= 0x30 && c <= 0x39) p++;
    } else {
      this.pos = p;
      this.fail('Expecting value');
    }
    const intDigits = p - intStart;
    let isFloat = false;
    let exponent = false;
    // Python's scanner takes '.' and 'e' only when a digit follows; otherwise the number ends
    // before them and the stray character is a syntax error at the caller.
    let fracLen = 0;
    if (b[p] === 0x2e && (c = b[p + 1]) !== undefined && c >= 0x30 && c <= 0x39) {
      p += 2;
      while ((c = b[p]) !== undefined && c >= 0x30 && c <= 0x39) p++;
      isFloat = true;
      fracLen = p - intStart - intDigits - 1;
    }
    if (b[p] === 0x65 || b[p] === 0x45) {
      let q = p + 1;
      if (b[q] === 0x2b || b[q] === 0x2d) q++;
      if ((c = b[q]) !== undefined && c >= 0x30 && c <= 0x39) {
        q++;
        while ((c = b[q]) !== undefined && c >= 0x30 && c <= 0x39) q++;
        p = q;
        isFloat = true;
        exponent = true;
      }
    }
    if (!isFloat && intDigits > PYTHON_MAX_INT_DIGITS) {
      this.pos = start;
      this.fail(`integer with ${intDigits} digits exceeds the ${PYTHON_MAX_INT_DIGITS}-digit limit of Python's int()`);
    }
    this.pos = p;
    const length = p - start;
    if (isFloat) {
      this.features |= F_DOC_FLOAT;
      // A float is at most 24 characters in any profile ("-1.2345678901234567e-308"); without an
      // exponent, Python's layout adds at most ".0" or an exponent suffix to the lexeme's digits.
      this.bound += exponent ? Math.max(length, 25) : length + 6;
    } else {
      if (intDigits > 15) this.features |= F_DOC_BIGINT;
      else if (length === 2 && b[start] === 0x2d && b[intStart] === 0x30) this.features |= F_DOC_NEG_ZERO_INT;
      // The javascript profile rounds an integer of 16+ digits to a double: 9999999999999999 → 1e16, a digit more.
      this.bound += intDigits > 15 ? length + 1 : length;
    }
    this.push(isFloat ? (exponent ? T_FLT : T_FLT | plainFloatLayout(b, intStart, intDigits, fracLen)) : T_INT, start, p);
  }

  private string(): void {
    const b = this.b;
    const n = this.n;
    const start = this.pos + 1;
    let p = start;
    let flags = 0;
    for (;;) {
      // Hot loop: plain ASCII runs.
      let cls = 0;
      while (p < n && (cls = STRING_CLASS[b[p]!]!) === 0) p++;
      if (p >= n) {
        this.pos = p;
        this.fail('Unterminated string');
      }
      if (cls === 1) break;
      if (cls === 2) {
        flags |= F_ESC;
        p = this.escape(p);
      } else if (cls === 4) {
        flags |= F_NONASCII;
        p = this.utf8Run(p);
      } else if (cls === 5) {
        flags |= F_DEL;
        this.bound += 5; // ensure_ascii writes \u007f
        p++;
      } else {
        this.pos = p;
        this.fail('Invalid control character in string');
      }
    }
    this.pos = p + 1;
    const kind = T_STR | flags | this.surrogateFlags;
    this.features |= kind;
    // Escapes never grow in any profile; raw UTF-8-encoded surrogates read as three U+FFFD each
    // in the javascript profile (3 bytes → 9).
    this.bound += (kind & F_RAWSURR) === 0 ? p - start + 2 : 3 * (p - start) + 2;
    this.push(kind, start, p);
    this.surrogateFlags = 0;
  }

  /**
   * Validates the run of text from `p` (a byte >= 0x80) to the next quote, backslash or control
   * byte; returns where it ends. Long runs of non-ASCII text (any language but English) are checked
   * by the native UTF-8 validator; only a run it refuses is walked sequence by sequence, to accept
   * the UTF-8-encoded surrogates Python accepts (`surrogatepass`) or to report the bad byte.
   */
  private utf8Run(p: number): number {
    const b = this.b;
    const n = this.n;
    let q = p;
    let cls = 0;
    while (q < n && ((cls = STRING_CLASS[b[q]!]!) === 0 || cls === 4)) q++;
    if (q - p >= NATIVE_UTF8_MIN && isUtf8(b.subarray(p, q))) {
      // Valid UTF-8 has no surrogates. ensure_ascii writes at most 2 more bytes per byte beyond
      // ASCII; counting the run's ASCII bytes too keeps the bound an upper bound without a pass.
      this.bound += 2 * (q - p);
      return q;
    }
    while (p < q) p = b[p]! < 0x80 ? p + 1 : this.utf8(p);
    return p;
  }

  /** Validates one escape at `p` (a backslash); returns the position after it. */
  private escape(p: number): number {
    const b = this.b;
    const e = b[p + 1];
    if (e === undefined) {
      this.pos = p;
      this.fail('Unterminated string');
    }
    if (SIMPLE_ESCAPES[e] === 1) return p + 2;
    if (e !== 0x75) {
      this.pos = p;
      this.fail('Invalid \\escape');
    }
    const unit = this.hex4(p + 2);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      // Python joins a high-surrogate escape with an immediately following low-surrogate escape.
      if (b[p + 6] === 0x5c && b[p + 7] === 0x75) {
        const low = this.hex4Maybe(p + 8);
        if (low >= 0xdc00 && low <= 0xdfff) return p + 12;
      }
      this.surrogateFlags |= F_LONE;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      this.surrogateFlags |= F_LONE;
    }
    return p + 6;
  }

  private hex4(p: number): number {
    const v = this.hex4Maybe(p);
    if (v < 0) {
      this.pos = p;
      this.fail('Invalid \\uXXXX escape');
    }
    return v;
  }

  private hex4Maybe(p: number): number {
    const b = this.b;
    if (p + 4 > this.n) return -1;
    const h0 = HEX[b[p]!]!;
    const h1 = HEX[b[p + 1]!]!;
    const h2 = HEX[b[p + 2]!]!;
    const h3 = HEX[b[p + 3]!]!;
    if ((h0 | h1 | h2 | h3) > 15) return -1;
    return (h0 << 12) | (h1 << 8) | (h2 << 4) | h3;
  }

  /** Validates one UTF-8 sequence at `p` as Python's decoder with `surrogatepass` does. */
  private utf8(p: number): number {
    const b = this.b;
    const c0 = b[p]!;
    const c1 = b[p + 1] ?? 0;
    // ensure_ascii writes each code point as \uXXXX, an astral one as two: 2 bytes → 6, 3 → 6, 4 → 12.
    if (c0 >= 0xc2 && c0 <= 0xdf) {
      if ((c1 & 0xc0) === 0x80) {
        this.bound += 4;
        return p + 2;
      }
    } else if (c0 >= 0xe0 && c0 <= 0xef) {
      const c2 = b[p + 2] ?? 0;
      const lo = c0 === 0xe0 ? 0xa0 : 0x80;
      if (c1 >= lo && c1 <= 0xbf && (c2 & 0xc0) === 0x80) {
        if (c0 === 0xed && c1 >= 0xa0) this.surrogateFlags |= F_RAWSURR | F_LONE;
        this.bound += 3;
        return p + 3;
      }
    } else if (c0 >= 0xf0 && c0 <= 0xf4) {
      const c2 = b[p + 2] ?? 0;
      const c3 = b[p + 3] ?? 0;
      const lo = c0 === 0xf0 ? 0x90 : 0x80;
      const hi = c0 === 0xf4 ? 0x8f : 0xbf;
      if (c1 >= lo && c1 <= hi && (c2 & 0xc0) === 0x80 && (c3 & 0xc0) === 0x80) {
        this.bound += 8;
        return p + 4;
      }
    }
    this.pos = p;
    return this.fail('Invalid UTF-8 in string');
  }
}
