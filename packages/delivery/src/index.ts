/**
 * @jobhook/delivery: the webhook delivery engine of a service that sends signed webhooks: sign,
 * SSRF guard, pinned POST, retry policy, work queues, deliveries log.
 * @packageDocumentation
 */
export { attemptErrorText } from './attempt-error-text.js';
export { createDeliverer, type Deliverer } from './deliverer.js';
export {
  DEFAULT_MAX_CANONICAL_BYTES,
  DEFAULT_SIGNED_CACHE_BYTES,
  DEFAULT_SIGNED_CACHE_ENTRIES,
  type DelivererOptions,
  type PayloadSigner,
} from './options/deliverer-options.js';
export type { DeliveryLog, DeliveryState, DeliverySubject } from './delivery-log.js';
export type { AttemptOutcome, AttemptRecord, DeliveryTask } from './delivery-types.js';
export type { JobhookAnswer } from './jobhook-answer.js';
export type { SignedWebhook } from './signed-payload-cache.js';
export {
  createSsrfGuard,
  type HostResolver,
  type ReceiverTarget,
  type ResolvedAddress,
  type SsrfGuard,
  type SsrfGuardOptions,
} from './ssrf-guard.js';
export { refusalReason, type ReceiverRefusalReason } from './receiver-refusal.js';
export { DELIVERY_ERROR_STATUS, DeliveryError, type DeliveryErrorCode } from './delivery-error.js';
export { createRetryPolicy, type RetryPolicy, type RetryPolicyOptions } from './retry-policy.js';
export { parseRetryAfter } from '@jobhook/core/internal';
export { postWebhook, type PostWebhookRequest, type PostWebhookResult } from './post-webhook.js';
export { DEFAULT_USER_AGENT } from './user-agent.js';
export type { QueuedWork, WorkHandlers, WorkQueue, WorkQueueCounts } from './queue/work-queue.js';
export { createMemoryWorkQueue, type MemoryWorkQueueOptions } from './queue/memory-work-queue.js';
export { createBullmqWorkQueue, BULLMQ_QUEUE_NAMES, type BullmqWorkQueueOptions } from './queue/bullmq-work-queue.js';
