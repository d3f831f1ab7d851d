/**
 * The names of jobhook's spans and of their attributes. Where OpenTelemetry's semantic conventions
 * for HTTP servers fit (the request's method, the status answered, `error.type`), their names are
 * used; the rest are under `jobhook.`.
 */

/** Span names. */
export const SPAN_NAMES = Object.freeze({
  /** One webhook delivery, from its head to the answer (its handler inside). */
  webhook: 'jobhook.webhook',
  /** One polled result handed to the receiver (`receiver.handlePolled`, by the reconciler). */
  poll: 'jobhook.poll',
  /** Your handlers (`onSuccess` / `onFail`, then `onEvent`) of one job: a child of either, until they settle. */
  handler: 'jobhook.handler',
} as const);

/** Span attribute names. */
export const SPAN_ATTRIBUTES = Object.freeze({
  /** `webhook` or `poll`. */
  source: 'jobhook.source',
  /** The job id, in lower case, once known (after verification for a webhook). */
  jobId: 'jobhook.job.id',
  /** The job's status as the event says: `success` or `fail`. */
  jobStatus: 'jobhook.job.status',
  /** The outcome kind: `handled`, `duplicate`, `in-flight`, `handlers-busy`, `rejected`, ... */
  outcome: 'jobhook.outcome',
  /** The canonical profile the signature matched (webhooks). */
  profile: 'jobhook.profile',
  /** Id of the key that verified (webhooks). */
  keyId: 'jobhook.key.id',
  /** The `ERR_*` code of every outcome but `handled` and `duplicate`. */
  errorCode: 'jobhook.error.code',
  /** OpenTelemetry's HTTP conventions: the request method (`_OTHER` when not a known one). */
  httpMethod: 'http.request.method',
  /** OpenTelemetry's HTTP conventions: the status answered. */
  httpStatus: 'http.response.status_code',
  /** OpenTelemetry's convention for a failed operation: the `ERR_*` code, on spans whose status is `ERROR`. */
  errorType: 'error.type',
} as const);
