import { JobhookError } from '../errors.js';
import { Parser } from './parse-document.js';
import type { ParsedBody } from './tape.js';

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
