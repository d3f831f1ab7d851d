import { JobhookError } from '../errors.js';
import { Parser } from './parse-document.js';
import type { ParsedBody } from './tape.js';
import { DEFAULT_MAX_DEPTH, resolveParseOptions, type ParseOptions, type ResolvedParseOptions } from './canonical-option-checks.js';

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
