/**
 * @jobhook/core/canonical: the canonical forms a signer hashes, for tools that write or compare them
 * (`jobhook canonicalize`, benchmarks, a signer of your own); parse a body with
 * `@jobhook/core/json`'s `parseBody` to write several profiles from one parse.
 * @packageDocumentation
 */
export { canonicalize, type CanonicalizeOptions } from './canonicalize.js';
export { CANONICAL_PROFILES, isCanonicalProfile, serializeCanonical, type CanonicalProfile } from './profiles.js';
export {
  CANONICAL_BYTES_PER_BODY_BYTE,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_DEPTH,
  MAX_MAX_DEPTH,
  type ParseOptions,
} from './canonical-option-checks.js';
export { PYTHON_MAX_INT_DIGITS } from './parse-numbers.js';
export type { ParsedBody } from './tape.js';
