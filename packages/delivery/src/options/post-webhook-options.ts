import { checkInteger, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';
import type { ReceiverTarget } from '../ssrf-guard.js';

/** Default `maxReadBytes` of `postWebhook`: an answer's body is read (counted) this far at most. */
export const DEFAULT_MAX_READ_BYTES = 64 * 1024;

/** One webhook POST. */
export interface PostWebhookRequest {
  /** The receiver URL, already checked by the SSRF guard. */
  url: URL;
  /**
   * The address the guard checked: the connection goes there and nowhere else (then to its
   * `fallbacks`, in order, when it refuses: `localhost`'s `::1`).
   */
  address: ReceiverTarget;
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
  /** Covers connect, TLS, sending, the answer's status line and headers, and reading its body; 1 to 2^31-1. */
  timeoutMs: number;
  /** Bytes of the answer's body kept (for the attempt record); the rest is counted and discarded. Default 1024. */
  maxResponseBytes?: number;
  /**
   * Reading the answer's body stops after this many bytes (then `bodyComplete` is false): an
   * endless answer costs neither memory nor time beyond it. At least `maxResponseBytes`. Default 65536.
   */
  maxReadBytes?: number;
  /** Clock (ms) of `answeredAt`. Default `Date.now`. */
  now?: () => number;
  /** Extra trusted CA certificates (PEM) for `https:` receivers, e.g. a private CA. Default Node's. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
}

/** {@link PostWebhookRequest} checked, with defaults. @internal */
export type ResolvedPostWebhookRequest = PostWebhookRequest &
  Required<Pick<PostWebhookRequest, 'maxResponseBytes' | 'maxReadBytes' | 'now'>>;

const WHERE = 'postWebhook';

/**
 * Checks the request's bounds and applies the defaults, before anything is sent.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolvePostWebhookRequest(req: PostWebhookRequest): ResolvedPostWebhookRequest {
  const { maxResponseBytes = 1024, now = Date.now } = req;
  const maxReadBytes = req.maxReadBytes ?? Math.max(DEFAULT_MAX_READ_BYTES, maxResponseBytes);
  if (
    !Number.isSafeInteger(maxResponseBytes) ||
    maxResponseBytes < 0 ||
    !Number.isSafeInteger(maxReadBytes) ||
    maxReadBytes < maxResponseBytes
  ) {
    throw optionError(WHERE, 'maxResponseBytes and maxReadBytes must be integers with 0 <= maxResponseBytes <= maxReadBytes');
  }
  // The timer would fire at once beyond 2^31-1 ms, and never with NaN: both are caller bugs.
  checkInteger(WHERE, 'timeoutMs', req.timeoutMs, { min: 1, max: MAX_TIMER_MS });
  return { ...req, maxResponseBytes, maxReadBytes, now };
}
