import { optionError } from '../internal/option-checks.js';

/** Header names of the service's webhook requests (spec §6.1). */
export interface WebhookHeaderNames {
  /** Hex RSA signature. Default `X-Service-Signature`. */
  signature: string;
  /** Hash algorithm of the signature. Default `X-Service-Hash-Algorithm`. */
  hashAlgorithm: string;
  /** Marks a webhook of the service. Default `X-Service-Webhook`. */
  webhook: string;
}

/** The spec's header names. */
export const DEFAULT_HEADER_NAMES: Readonly<WebhookHeaderNames> = Object.freeze({
  signature: 'X-Service-Signature',
  hashAlgorithm: 'X-Service-Hash-Algorithm',
  webhook: 'X-Service-Webhook',
});

/** The only hash algorithm the service uses (value of the hash-algorithm header). */
export const HASH_ALGORITHM = 'SHA256';

/** An HTTP header name (RFC 9110 `token`). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** True when `value` is a string that can name an HTTP header. @internal (`@jobhook/core/internal`) */
export function isHeaderName(value: unknown): value is string {
  return typeof value === 'string' && HEADER_NAME.test(value);
}

/**
 * The spec's header names with `given` over them, each checked to be an HTTP header name.
 * @throws JobhookError `ERR_OPTION_INVALID`, the message prefixed with `owner` and naming the field.
 * @internal
 */
export function resolveHeaderNames(given: Partial<WebhookHeaderNames> | undefined, owner: string): WebhookHeaderNames {
  if (given !== undefined && (typeof given !== 'object' || given === null)) {
    throw optionError(owner, 'headerNames must be an object');
  }
  const names = { ...DEFAULT_HEADER_NAMES, ...given };
  for (const [key, value] of Object.entries(names)) {
    if (!isHeaderName(value)) {
      throw optionError(owner, `headerNames.${key} must be an HTTP header name, got ${JSON.stringify(value)}`);
    }
  }
  return names;
}
