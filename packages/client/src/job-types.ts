import type { JobError, JsonObject, JsonValue } from '@jobhook/core';
import type { RawJson } from '@jobhook/core/json';

/**
 * How the reference sender (`@jobhook/sender`) should play the provider: `input.simulate` of a
 * submission. Real services ignore it.
 */
export interface SimulateInput {
  /** Final status of the job. Default: `success`. */
  outcome?: 'success' | 'fail';
  /** Processing time before the job finishes, ms. */
  delay_ms?: number;
  /** The job's `output` on success. */
  output?: unknown;
  /** `error.error_code` on failure. */
  error_code?: string;
}

/** `input` of a submission (spec §4.2). Members the spec does not list are sent as given. */
export interface JobInput {
  /** A file UUID or a URL. */
  file?: string;
  /** Language, for speech to text. */
  language?: string;
  /** Reference sender only: how the simulated provider behaves. */
  simulate?: SimulateInput;
  [field: string]: unknown;
}

/**
 * The body of `POST /v3/universal-ai/async` (spec §4.2). It is written with core's
 * `stringifyJson`, so numbers are sent exactly: bigints as integers, `rawJson('1.0')` as `1.0`.
 */
export interface SubmitJobRequest {
  /** `<feature>/<subfeature>/<provider>`, e.g. `ocr/ocr_async/amazon`. */
  model: string;
  input: JobInput;
  /** HTTPS URL that receives the signed `async_job_completed` webhook. */
  webhook_receiver?: string;
  /**
   * Free-form object echoed back as `user_parameters` in the webhook. A `RawJson` (core's
   * `rawJson('{"x": 1.0}')`) is sent byte for byte.
   */
  user_webhook_parameters?: Record<string, unknown> | RawJson;
  /** When true, the webhook payload carries `original_response`. */
  show_original_response?: boolean;
  /** Fields the spec does not list are sent as given. */
  [field: string]: unknown;
}

/**
 * Job states as the poll answers them: `processing` while it runs (the reference sender's name;
 * the spec does not name it), then `success` or `fail`, which are final.
 */
export type JobStatus = 'processing' | 'success' | 'fail';

/**
 * The answer to a submission: at least `job_id`. Numbers are exact (integers beyond 2^53 are
 * `bigint`), as in a verified webhook payload.
 */
export interface SubmittedJob {
  job_id: string;
  /** `processing` on the reference sender; not shown by the spec. */
  status?: string;
  [field: string]: JsonValue | undefined;
}

/** The poll answer of a job (spec §2.2, §4.3). */
export interface JobView {
  job_id: string;
  /** {@link JobStatus}; any other string is treated as not final. */
  status: string;
  /** The normalized result, on `success`. */
  output?: JsonObject | null;
  /** Failure details, on `fail`. */
  error?: JobError | null;
  /** Price of the job, a decimal string, where the service shows it. */
  cost?: string | null;
  [field: string]: unknown;
}

/** A job that finished with a result. */
export interface SucceededJob extends JobView {
  status: 'success';
  output: JsonObject;
}

/** A job that failed. */
export interface FailedJob extends JobView {
  status: 'fail';
  error: JobError;
}

/** The poll answer once the job is final: what `pollJob` resolves with. */
export type FinishedJob = SucceededJob | FailedJob;

/** The delivery log of a job's webhook (`GET /v3/universal-ai/async/{job_id}/deliveries`). */
export interface JobDeliveries {
  job_id: string;
  /** `pending`, `delivered`, `rejected`, `failed`; `null` for a job without `webhook_receiver`. */
  delivery: string | null;
  /** One entry per attempt, oldest first, as the service lists them. */
  attempts: JsonObject[];
  [field: string]: unknown;
}

/** The answer to `POST /v3/universal-ai/async/{job_id}/redeliver` (202). */
export interface RedeliverAnswer {
  job_id: string;
  [field: string]: JsonValue | undefined;
}
