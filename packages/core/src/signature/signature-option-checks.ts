import { checkInteger, checkObject, checkOneOf, optionError } from '../internal/option-checks.js';
import { resolveParseOptions, resolveProfiles } from '../canonical/canonical-option-checks.js';
import type { ParseOptions, ResolvedParseOptions } from '../canonical/canonical-option-checks.js';
import { CANONICAL_PROFILES, type CanonicalProfile } from '../canonical/profiles.js';
import { DEFAULT_HEADER_NAMES, isHeaderName, type WebhookHeaderNames } from './headers.js';

// The options of the signature room's front doors (signPayload, signPayloadAsync, createVerifier,
// and the header names every verifying door takes) are checked here. The parameters are typed by
// shape, not by the options interfaces, which live beside their factories and import this file.

/**
 * How the body bytes are laid out. The signature covers the canonical form whatever the body style.
 * - `python`: `json.dumps(payload)` defaults, as Python's HTTP clients send JSON (`", "`, `": "`, ASCII escapes);
 * - `canonical`: the canonical bytes themselves;
 * - `compact`: `json.dumps(payload, separators=(",", ":"), ensure_ascii=False)`.
 */
export type BodyStyle = 'python' | 'canonical' | 'compact';

/** The body layouts, in the order the docs list them. @internal (`@jobhook/core/internal`) */
export const BODY_STYLES: readonly BodyStyle[] = Object.freeze(['python', 'canonical', 'compact']);

/** True for `python`, `canonical` or `compact`. @internal (`@jobhook/core/internal`) */
export function isBodyStyle(value: unknown): value is BodyStyle {
  return value === 'python' || value === 'canonical' || value === 'compact';
}

/**
 * The spec's header names with `given` over them, each checked to be an HTTP header name.
 * @throws JobhookError `ERR_OPTION_INVALID`, the message prefixed with `owner` and naming the field.
 * @internal
 */
export function resolveHeaderNames(given: Partial<WebhookHeaderNames> | undefined, owner: string): WebhookHeaderNames {
  if (given !== undefined) checkObject(owner, 'headerNames', given);
  const names = { ...DEFAULT_HEADER_NAMES, ...given };
  for (const [key, value] of Object.entries(names)) {
    if (!isHeaderName(value)) {
      throw optionError(owner, `headerNames.${key} must be an HTTP header name, got ${JSON.stringify(value)}`);
    }
  }
  return names;
}

/** The options of `signPayload` after defaults and checks. @internal */
export interface ResolvedSignOptions {
  readonly profile: CanonicalProfile;
  readonly bodyStyle: BodyStyle;
  readonly headerNames: WebhookHeaderNames;
  readonly maxCanonicalBytes: number;
}

/**
 * Checks the options of `signPayload` and `signPayloadAsync` (`caller` names which).
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveSignOptions(
  options: { profile?: unknown; bodyStyle?: unknown; headerNames?: Partial<WebhookHeaderNames>; maxCanonicalBytes?: unknown },
  caller: string,
): ResolvedSignOptions {
  checkObject(caller, 'options', options);
  const { profile = 'python', bodyStyle = 'python', maxCanonicalBytes = Number.MAX_SAFE_INTEGER } = options;
  return {
    maxCanonicalBytes: checkInteger(caller, 'maxCanonicalBytes', maxCanonicalBytes, { min: 2 }),
    profile: checkOneOf(caller, 'profile', profile, CANONICAL_PROFILES),
    bodyStyle: checkOneOf(caller, 'bodyStyle', bodyStyle, BODY_STYLES),
    headerNames: resolveHeaderNames(options.headerNames, caller),
  };
}

/** The options of `createVerifier` after checks, the key input still to parse. @internal */
export interface ResolvedVerifierOptions<K> {
  readonly publicKeys: K;
  readonly profiles: readonly CanonicalProfile[];
  readonly limits: ResolvedParseOptions;
}

/**
 * Checks the options of `createVerifier`: `publicKeys` given (the keys themselves are checked when
 * the key ring is built), profiles, body limits.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveVerifierOptions<K>(
  options: ParseOptions & { publicKeys?: K; profiles?: readonly string[] },
): ResolvedVerifierOptions<K> {
  const where = 'createVerifier';
  checkObject(where, 'options', options, 'an object with at least `publicKeys`');
  const { publicKeys } = options;
  if (publicKeys === undefined) {
    const renamed = 'keys' in options ? ' (`keys` was its old name, removed before 1.0)' : '';
    throw optionError(where, `\`publicKeys\` is required (the service public key PEM)${renamed}`);
  }
  return { publicKeys, profiles: resolveProfiles(options.profiles, where), limits: resolveParseOptions(options, where) };
}
