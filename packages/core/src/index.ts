/**
 * @jobhook/core: receive the service's signed `async_job_completed` webhooks exactly once. This
 * entry holds what a receiver needs; the other audiences have their own entries: signing
 * (`@jobhook/core/sign`), exact JSON (`/json`), canonical forms (`/canonical`), why a delivery fails
 * (`/diagnosis`), the recipient tag (`/recipient`), stores (`/redis`), the adapter kit (`/adapter`),
 * metrics (`/metrics`), the expected-jobs ledger (`/ledger`), test helpers (`/testing`).
 * @packageDocumentation
 */
export { JobhookError, isJobhookError, type ErrorCode, type JobhookErrorOptions } from './errors.js';
export {
  createReceiver,
  type Receiver,
  type ReceiverRequest,
  type ReceiverResponse,
} from './receiver/create-receiver.js';
export { createFetchHandler, type FetchWebhookHandler } from './adapter/fetch-handler.js';
export { constructEvent, type ConstructEventOptions } from './receiver/construct-event.js';
export {
  createVerifier,
  type Verifier,
  type VerifierOptions,
  type VerifyInput,
  type VerifyResult,
} from './signature/verifier.js';
export { createKeyRing, type KeyRing, type PublicKeyInput, type RingKey } from './keys/key-ring.js';
export { createMemoryStore, type MemoryStoreOptions } from './store/memory-store.js';
export {
  validateEvent,
  type AsyncJobCompletedEvent,
  type FailEvent,
  type JobError,
  type SuccessEvent,
} from './events/async-job-event.js';
export { createJsonLogger, silentLogger, type JsonLoggerOptions, type LogLevel, type Logger } from './log/logger.js';
export { createBodyBudget, type BodyBudget } from './receiver/body-budget.js';
export { RECEIVER_DEFAULTS, type ReceiverDefaults } from './receiver/receiver-defaults.js';

// Types only from here on: what the options, events and results above are made of.
export type { EventHandler, HandlerContext, ReceiverOptions } from './receiver/receiver-options.js';
export type { OutcomeKind, ReceiverOutcome, ReceiverStats, VerifiedWebhook } from './receiver/receiver-outcome.js';
export type { PolledJob, PolledOutcome } from './receiver/polled-job.js';
export type { LateEventContext, LateEventRule } from './receiver/event-age.js';
export type { RequestHeaders } from './http/request-headers.js';
export type {
  ClaimResult,
  Clock,
  IdempotencyStore,
  TagNonceBinding,
  TagNonceStore,
  TransactionalStore,
  TransactionResult,
} from './store/idempotency-store.js';
export type { AdapterOptions, FetchHandlerOptions, ReceiverOrOptions } from './adapter/adapter-option-checks.js';
export type { CanonicalProfile } from './canonical/profiles.js';
export type { ParseOptions } from './canonical/canonical-option-checks.js';
export type { BigIntegers, JsonObject, JsonValue, LosslessJsonValue } from './canonical/to-value.js';
export type { WebhookHeaderNames } from './signature/headers.js';
export type { CaptureFailuresOptions, RecordOptions, RefusalCause } from './diagnosis/index.js';
