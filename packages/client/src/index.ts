/**
 * @jobhook/client: submit async jobs, poll them, wait for their results (webhook first, polling
 * as the fallback, each job handled once).
 * @packageDocumentation
 */
export { createClient, type CallOptions, type Client, type SubmitOptions } from './create-client.js';
export { DEFAULT_MAX_ANSWER_BYTES, DEFAULT_REQUEST_TIMEOUT_MS, type ClientOptions } from './options/client-options.js';
export { submitWithLedger } from './submit-with-ledger.js';
export { DEFAULT_RESULT_DEADLINE_MS, type LedgerSubmitOptions } from './options/ledger-submit-options.js';
export { createReconciler, type Reconciler, type ReconcileSummary } from './reconciler.js';
export {
  DEFAULT_MAX_POLL_BACKOFF_MS,
  DEFAULT_MAX_POLLS_PER_SECOND,
  DEFAULT_POLL_BACKOFF_MS,
  DEFAULT_RECONCILE_BATCH,
  DEFAULT_RECONCILE_HORIZON_MS,
  DEFAULT_RECONCILE_INTERVAL_MS,
  DEFAULT_UNATTACHED_GRACE_MS,
  type ReconcilerOptions,
} from './options/reconciler-options.js';
export { POLL_BACKOFF_FACTOR, isFinished } from './poll-job.js';
export {
  DEFAULT_MAX_POLL_INTERVAL_MS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_POLL_TIMEOUT_MS,
  type PollOptions,
} from './options/poll-options.js';
export { createResultWaiter, type ResultWaiter } from './result-waiter.js';
export type { JobResult } from './job-result.js';
export type { ResultWaiterOptions, WaitOptions } from './options/result-waiter-options.js';
export {
  SERVICE_ERROR_CODES,
  ServiceApiError,
  isServiceApiError,
  type ServiceApiErrorOptions,
  type ServiceErrorCode,
} from './service-api-error.js';
export type {
  FailedJob,
  FinishedJob,
  JobDeliveries,
  JobInput,
  JobStatus,
  JobView,
  RedeliverAnswer,
  SimulateInput,
  SubmitJobRequest,
  SubmittedJob,
  SucceededJob,
} from './job-types.js';
export {
  DEFAULT_RECIPIENT_TAG_MAX_AGE_MS,
  RECIPIENT_TAG_KEY,
  createRecipientTag,
  withRecipientTag,
  type CreateRecipientTagOptions,
  type RecipientTag,
} from '@jobhook/core/recipient';
