import { JobhookError } from '../errors.js';
import { parseBodyUnchecked } from './parse.js';
import { resolveParseOptions, type ParseOptions } from './canonical-option-checks.js';
import { isCanonicalProfile, serializeCanonical, type CanonicalProfile } from './profiles.js';

/** Options of {@link canonicalize}. */
export interface CanonicalizeOptions extends ParseOptions {
  /** The profile to write. Default `python`. */
  profile?: CanonicalProfile;
}

/**
 * The canonical bytes a signer hashed, from the body you received:
 * `json.dumps(json.loads(body), sort_keys=True, indent=2, ensure_ascii=False)` byte for byte with the
 * default `python` profile.
 *
 * @example
 * ```ts
 * canonicalize('{"b": 1.0, "a": 1e16}').toString() // '{\n  "a": 1e+16,\n  "b": 1.0\n}'
 * ```
 * @throws JobhookError `ERR_BODY_*` for bad bodies, `ERR_CANONICAL_TOO_LARGE` over `maxCanonicalBytes`, `ERR_CANONICAL_UNREPRESENTABLE` when the profile's reference would fail.
 */
export function canonicalize(body: Uint8Array | string, options: CanonicalizeOptions = {}): Buffer {
  const { profile = 'python' } = options;
  if (!isCanonicalProfile(profile)) {
    throw new JobhookError('ERR_OPTION_INVALID', `canonicalize: unknown profile ${JSON.stringify(profile)}`);
  }
  const limits = resolveParseOptions(options, 'canonicalize');
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  // The parse never escapes this call, so it may use the shared scratch tape.
  return serializeCanonical(parseBodyUnchecked(bytes, { ...limits, scratch: true }), profile);
}
