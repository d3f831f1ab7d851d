/**
 * @jobhook/core: exact canonical JSON, signature verification and signing for the service's
 * `async_job_completed` webhooks.
 * @packageDocumentation
 */
export { ERROR_STATUS, JobhookError, isJobhookError, type ErrorCode, type JobhookErrorOptions } from './errors.js';
export {
  CANONICAL_BYTES_PER_BODY_BYTE,
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
export {
  toLosslessValue,
  toValue,
  type BigIntegers,
  type JsonObject,
  type JsonValue,
  type LosslessJsonValue,
  type ToValueOptions,
} from './canonical/to-value.js';
export { RawJson, rawJson, stringifyJson } from './canonical/value-json.js';
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
export { constructEvent, type ConstructEventOptions } from './signature/construct-event.js';
export {
  DIAGNOSIS_CAUSES,
  diagnoseDelivery,
  isDiagnosisCause,
  type DiagnoseOptions,
  type Diagnosis,
  type DiagnosisCause,
  type DiagnosisRequest,
  type CaptureFailuresOptions,
  type RefusalCause,
} from './diagnosis/index.js';
export {
  loadPrivateKey,
  signPayload,
  signPayloadAsync,
  type BodyStyle,
  type PrivateKeyInput,
  type SignOptions,
  type SignedPayload,
} from './signature/sign.js';
export { DEFAULT_HEADER_NAMES, HASH_ALGORITHM, type WebhookHeaderNames } from './signature/headers.js';
export { createMemoryStore, type MemoryStoreOptions } from './store/memory-store.js';
export {
  isTransactionalStore,
  type IdempotencyStore,
  type ClaimResult,
  type Clock,
  type TransactionalStore,
  type TransactionResult,
} from './store/idempotency-store.js';
export {
  validateEvent,
  type AsyncJobCompletedEvent,
  type FailEvent,
  type JobError,
  type SuccessEvent,
} from './events/async-job-event.js';
export {
  createReceiver,
  type Receiver,
  type ReceiverRequest,
  type ReceiverResponse,
} from './receiver/create-receiver.js';
export {
  DEFAULT_DONE_TTL_MS,
  DEFAULT_LEASE_MS,
  type EventHandler,
  type HandlerContext,
  type ReceiverOptions,
} from './receiver/receiver-options.js';
export type { OutcomeKind, ReceiverOutcome, ReceiverStats, VerifiedWebhook } from './receiver/receiver-outcome.js';
export type { PolledJob, PolledOutcome } from './receiver/polled-job.js';
export type { RequestHeaders } from './http/request-headers.js';
export { createJsonLogger, silentLogger, type JsonLoggerOptions, type LogLevel, type Logger } from './log/logger.js';
export {
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_MAX_EVENT_AGE_MS,
  type LateEventContext,
  type LateEventRule,
} from './receiver/event-age.js';
export { createBodyBudget, type BodyBudget } from './receiver/body-budget.js';
export type { ReceiverOrOptions } from './adapter/resolve-receiver.js';
export type { AdapterOptions } from './adapter/adapter-options.js';
export { createFetchHandler, type FetchWebhookHandler } from './adapter/fetch-handler.js';
// The adapter kit (resolveReceiver, receiveNodeRequest, body readers, ...) is @jobhook/core/adapter.
