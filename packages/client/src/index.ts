/**
 * @jobhook/client: submit async jobs, poll them, wait for their results (webhook first, polling
 * as the fallback, each job handled once).
 * @packageDocumentation
 */
export {
  createClient,
  DEFAULT_MAX_ANSWER_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type CallOptions,
  type Client,
  type ClientOptions,
  type SubmitOptions,
} from './create-client.js';
export { DEFAULT_RESULT_DEADLINE_MS, submitWithLedger, type LedgerSubmitOptions } from './submit-with-ledger.js';
export {
  createReconciler,
  DEFAULT_MAX_POLL_BACKOFF_MS,
  DEFAULT_MAX_POLLS_PER_SECOND,
  DEFAULT_POLL_BACKOFF_MS,
  DEFAULT_RECONCILE_BATCH,
  DEFAULT_RECONCILE_HORIZON_MS,
  DEFAULT_RECONCILE_INTERVAL_MS,
  DEFAULT_UNATTACHED_GRACE_MS,
  type Reconciler,
  type ReconcilerOptions,
  type ReconcileSummary,
} from './reconciler.js';
export {
  DEFAULT_MAX_POLL_INTERVAL_MS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_POLL_TIMEOUT_MS,
  POLL_BACKOFF_FACTOR,
  isFinished,
  type PollOptions,
} from './poll-job.js';
export {
  createResultWaiter,
  type JobResult,
  type ResultWaiter,
  type ResultWaiterOptions,
  type WaitOptions,
} from './result-waiter.js';
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
