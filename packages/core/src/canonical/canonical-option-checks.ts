import { checkInteger, checkOneOf, optionError } from '../internal/option-checks.js';
import { CANONICAL_PROFILES, isCanonicalProfile, type CanonicalProfile } from './profiles.js';

// Every option the canonical room takes (body limits, profiles, big integers) is checked here, for
// every front door that passes them on (createReceiver, createVerifier, constructEvent, parseBody,
// signPayload, diagnoseDelivery): one message per mistake wherever it is made.

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

/** Options of `parseBody`. */
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

/**
 * Validates the options shared by everything that parses a body; throws `ERR_OPTION_INVALID`.
 * @internal
 */
export function resolveParseOptions(options: ParseOptions, owner: string): ResolvedParseOptions {
  const { maxBodyBytes = DEFAULT_MAX_BODY_BYTES, maxDepth = DEFAULT_MAX_DEPTH } = options;
  checkInteger(owner, 'maxBodyBytes', maxBodyBytes, { min: 2 });
  checkInteger(owner, 'maxDepth', maxDepth, { min: 1, max: MAX_MAX_DEPTH });
  const maxCanonicalBytes = options.maxCanonicalBytes ?? Math.min(Number.MAX_SAFE_INTEGER, maxBodyBytes * CANONICAL_BYTES_PER_BODY_BYTE);
  checkInteger(owner, 'maxCanonicalBytes', maxCanonicalBytes, { min: 2 });
  return { maxBodyBytes, maxDepth, maxCanonicalBytes };
}

/**
 * Checks a `bigIntegers` option (`BigIntegers` of to-value.ts; a typo must not silently give the other form).
 * @throws JobhookError `ERR_OPTION_INVALID`
 * @internal
 */
export function resolveBigIntegers(value: unknown, owner: string, fallback: 'string' | 'bigint'): 'string' | 'bigint' {
  return value === undefined ? fallback : checkOneOf(owner, 'bigIntegers', value, ['string', 'bigint'] as const);
}

/**
 * Validates a list of profile names (non-empty, known, no repeats); throws `ERR_OPTION_INVALID`.
 * @internal
 */
export function resolveProfiles(profiles: readonly string[] | undefined, owner: string): readonly CanonicalProfile[] {
  if (profiles === undefined) return CANONICAL_PROFILES;
  if (!Array.isArray(profiles) || profiles.length === 0) {
    throw optionError(owner, `profiles must be a non-empty array of ${CANONICAL_PROFILES.join(', ')}`);
  }
  const seen = new Set<string>();
  for (const p of profiles) {
    if (!isCanonicalProfile(p)) {
      throw optionError(owner, `unknown profile ${JSON.stringify(p)}; expected one of ${CANONICAL_PROFILES.join(', ')}`);
    }
    if (seen.has(p)) throw optionError(owner, `profile ${p} is listed twice`);
    seen.add(p);
  }
  return profiles as readonly CanonicalProfile[];
}
