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
