/**
 * @jobhook/core/sign: signing as the service does, for senders, test fixtures and key tools (the
 * reference sender, `jobhook sign`/`send`/`keygen`). A receiver needs none of it.
 * @packageDocumentation
 */
export {
  loadPrivateKey,
  signPayload,
  signPayloadAsync,
  type PrivateKeyInput,
  type SignOptions,
  type SignedPayload,
} from '../signature/sign.js';
export type { BodyStyle } from '../signature/signature-option-checks.js';
export { MIN_RSA_BITS, loadPublicKey, type PublicKeyInput, type RingKey } from '../keys/key-ring.js';
export { DEFAULT_HEADER_NAMES, type WebhookHeaderNames } from '../signature/headers.js';
