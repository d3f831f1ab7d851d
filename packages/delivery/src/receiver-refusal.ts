import { isJobhookError } from '@jobhook/core';
import { DeliveryError } from './delivery-error.js';

/**
 * Why the SSRF guard refused a receiver, in `DeliveryError.detail.reason`:
 * - `invalid_url`: not a URL (or not one `new URL()` accepts), empty, control characters, backslash;
 * - `too_long`: longer than the URL length limit, or a host name over 253 characters;
 * - `scheme`: not `https://` (or `http://` when insecure receivers are allowed);
 * - `userinfo`: `user:pass@` or a bare `@` before the host;
 * - `fragment`: a `#` (never sent, so only a way to confuse parsers);
 * - `host_name`: `localhost`, `*.localhost`, `*.local`, `*.internal`, ..., or a single-label name;
 * - `ip_notation`: an IP address in a form `new URL()` left alone;
 * - `port`: port 0;
 * - `address`: the host is, or resolves to, a non-public address (`detail.range` names its range);
 * - `resolve_failed`: the host name did not resolve (`detail.errorCode`: `ENOTFOUND`, `EAI_AGAIN`, ...).
 *   At submission this refuses the URL; at delivery time it is a retryable network error.
 */
export type ReceiverRefusalReason =
  | 'invalid_url'
  | 'too_long'
  | 'scheme'
  | 'userinfo'
  | 'fragment'
  | 'host_name'
  | 'ip_notation'
  | 'port'
  | 'address'
  | 'resolve_failed';

/** Builds the guard's `ERR_RECEIVER_REFUSED`; `message` is what the API answers as `detail`. @internal */
export function receiverRefused(
  reason: ReceiverRefusalReason,
  message: string,
  extra: Record<string, unknown> = {},
  cause?: unknown,
): DeliveryError {
  return new DeliveryError('ERR_RECEIVER_REFUSED', `webhook_receiver refused: ${message}`, {
    detail: { reason, ...extra },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The refusal reason of an `ERR_RECEIVER_REFUSED` error, or `undefined` for any other error. */
export function refusalReason(err: unknown): ReceiverRefusalReason | undefined {
  if (!isJobhookError(err, 'ERR_RECEIVER_REFUSED')) return undefined;
  const reason = err.detail?.['reason'];
  return typeof reason === 'string' ? (reason as ReceiverRefusalReason) : undefined;
}
