/**
 * @jobhook/sender: the reference service of the async job webhooks.
 * @packageDocumentation
 */
export type { JobRecord, JobStatus, JobError, JobResult, JobStore, DeliveryState, SimulatePlan } from './jobs/job-record.js';
export type { AttemptOutcome, AttemptRecord, DeliveryTask } from './delivery/delivery-types.js';
export type { WorkHandlers, WorkQueue, WorkQueueCounts } from './queue/work-queue.js';
export { createMemoryWorkQueue, type MemoryWorkQueueOptions } from './queue/memory-work-queue.js';
export { createBullmqWorkQueue, BULLMQ_QUEUE_NAMES, type BullmqWorkQueueOptions } from './queue/bullmq-work-queue.js';
export { createRedisJobStore, DEFAULT_JOB_TTL_MS, type RedisJobStoreOptions } from './jobs/redis-job-store.js';
export { createSender, GENERATED_KEY_BITS, type Sender } from './create-sender.js';
export type { SenderOptions } from './sender-options.js';
export type { AccountsConfig, KeyConfig, KeyKind, OrganizationConfig, TokenType } from './accounts/accounts-config.js';
export { loadAccountsConfig } from './accounts/load-accounts-config.js';
export { validateAccountsConfig, MAX_KEY_NAME_LENGTH, MIN_BALANCE_EXCLUSIVE, MAX_BALANCE_EXCLUSIVE } from './accounts/validate-accounts-config.js';
export type { KeyUsage, ManagementKeyView } from './accounts/account-registry.js';
export { maskToken } from './accounts/api-token.js';
export { CHAT_PRICE, DEFAULT_JOB_PRICE, JOB_PRICES, jobPrice } from './accounts/pricing.js';
export { readBearerToken, type BearerParseResult } from './auth/bearer.js';
export { simulateResult, DEFAULT_ERROR_CODE } from './jobs/simulate-provider.js';
export {
  createJobService,
  DEFAULT_MAX_REDELIVERIES,
  DEFAULT_REDELIVER_COOLDOWN_MS,
  type JobService,
  type JobServiceOptions,
  type RedeliverRefusal,
  type RedeliverResult,
} from './jobs/job-service.js';
export { createSsrfGuard, type HostResolver, type ResolvedAddress, type SsrfGuard, type SsrfGuardOptions } from './delivery/ssrf-guard.js';
export { refusalReason, type ReceiverRefusalReason } from './delivery/receiver-refusal.js';
export { createRetryPolicy, type RetryPolicy, type RetryPolicyOptions } from './delivery/retry-policy.js';
export { parseRetryAfter } from './delivery/retry-after.js';
export { buildWebhookPayload } from './delivery/webhook-payload.js';
export { postWebhook, type PostWebhookRequest, type PostWebhookResult } from './delivery/post-webhook.js';
export { createDeliverer, type Deliverer, type DelivererOptions, type PayloadSigner } from './delivery/deliverer.js';
export { DEFAULT_MAX_CANONICAL_BYTES, DEFAULT_SIGNED_CACHE_BYTES, DEFAULT_SIGNED_CACHE_ENTRIES } from './delivery/deliverer-options.js';
export { DEFAULT_USER_AGENT } from './delivery/user-agent.js';
export type { QueuedWork } from './queue/work-queue.js';
