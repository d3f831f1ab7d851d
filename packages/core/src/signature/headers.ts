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
