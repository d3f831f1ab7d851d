import { JobhookError } from '@jobhook/core';

/** The codes of `@jobhook/delivery`'s own errors, with the HTTP status a service answers them with. */
export const DELIVERY_ERROR_STATUS = {
  /**
   * The SSRF guard refuses a webhook receiver URL: not https (unless insecure receivers are allowed),
   * userinfo, or a host that is or resolves to a loopback, private, link-local, reserved... address.
   * `detail.reason` names why (see `refusalReason`).
   */
  ERR_RECEIVER_REFUSED: 400,
} as const;

/** A code of {@link DeliveryError}. */
export type DeliveryErrorCode = keyof typeof DELIVERY_ERROR_STATUS;

/**
 * The delivery engine's own errors: a {@link JobhookError} (so `isJobhookError(err, code)` and
 * `instanceof JobhookError` hold) whose codes are the sender side's, not a receiver's. Core's codes
 * (`ERR_OPTION_INVALID`, `ERR_KEY_INVALID`, `ERR_STORE_UNAVAILABLE`) stay `JobhookError`s.
 *
 * @example
 * ```ts
 * try { guard.checkUrl(url) }
 * catch (err) { if (err instanceof DeliveryError) console.log(err.code, refusalReason(err)) }
 * ```
 */
export class DeliveryError extends JobhookError<DeliveryErrorCode> {
  override readonly name: string = 'DeliveryError';
  protected static override readonly statusTable: Readonly<Record<string, number>> = DELIVERY_ERROR_STATUS;
}
