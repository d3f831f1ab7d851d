/**
 * @jobhook/core: exact canonical JSON, signature verification and signing for the service's
 * `async_job_completed` webhooks.
 * @packageDocumentation
 */
export { ERROR_STATUS, JobhookError, isJobhookError, type ErrorCode, type JobhookErrorOptions } from './errors.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_DEPTH,
  MAX_MAX_DEPTH,
  PYTHON_MAX_INT_DIGITS,
  parseBody,
  type ParseOptions,
} from './canonical/parse.js';
export type { ParsedBody } from './canonical/tape.js';
export { canonicalize, type CanonicalizeOptions } from './canonical/canonicalize.js';
export {
  CANONICAL_PROFILES,
  isCanonicalProfile,
  serializeCanonical,
  type CanonicalProfile,
} from './canonical/profiles.js';
export { toValue, type JsonObject, type JsonValue } from './canonical/to-value.js';
export { RawJson, rawJson } from './canonical/value-json.js';
export {
  MIN_RSA_BITS,
  createKeyRing,
  isKeyRing,
  loadPublicKey,
  type KeyRing,
  type PublicKeyInput,
  type RingKey,
} from './keys/key-ring.js';
export {
  createVerifier,
  verifySignature,
  type Verifier,
  type VerifierOptions,
  type VerifyInput,
  type VerifyResult,
} from './signature/verifier.js';
export {
  loadPrivateKey,
  signPayload,
  type BodyStyle,
  type PrivateKeyInput,
  type SignOptions,
  type SignedPayload,
} from './signature/sign.js';
export { DEFAULT_HEADER_NAMES, HASH_ALGORITHM, type WebhookHeaderNames } from './signature/headers.js';
