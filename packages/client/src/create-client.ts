import { JobhookError } from '@jobhook/core';
import { checkJobId } from '@jobhook/core/internal';
import { createRecipientTag, withRecipientTag } from '@jobhook/core/recipient';
import type { FinishedJob, JobDeliveries, JobView, RedeliverAnswer, SubmitJobRequest, SubmittedJob } from './job-types.js';
import { resolveClientOptions, type ClientOptions } from './options/client-options.js';
import { resolvePollOptions, type PollOptions } from './options/poll-options.js';
import { submissionJson } from './options/submit-request.js';
import { checkPollAnswer } from './poll-answer.js';
import { pollUntilFinished } from './poll-job.js';
import { requestJson, type HttpContext } from './request-json.js';
import { ServiceApiError } from './service-api-error.js';
import type { LedgerSubmitOptions } from './options/ledger-submit-options.js';
import { submitWithLedger } from './submit-with-ledger.js';

/** The async jobs API, below the base URL. */
const JOBS_PATH = '/v3/universal-ai/async';

/** Per-call options of `submitJob`. */
export interface SubmitOptions extends CallOptions {
  /**
   * With a ledger: the submission key of its entry. Default the recipient tag's nonce (with
   * `recipientSecret`), else a random UUID (see {@link LedgerSubmitOptions.key}).
   */
  submissionKey?: string;
}

/** Per-call options of the one-request methods. */
export interface CallOptions {
  /** Aborts the request; the promise rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** A client of the service's async jobs API. Every method rejects with {@link ServiceApiError}. */
export interface Client {
  /** The base URL in use (no trailing slash). */
  readonly baseUrl: string;
  /**
   * Submits a job (`POST /v3/universal-ai/async`). Never retried: a retry after a lost answer could
   * start the job twice. With `recipientSecret` and a `webhook_receiver`, the recipient tag is added
   * to `user_webhook_parameters` (a `RawJson` keeps its bytes: the member is inserted before its
   * closing brace); parameters that already hold `jobhook_recipient` are refused with
   * `ERR_RECIPIENT_KEY_TAKEN` before anything is sent.
   */
  submitJob(request: SubmitJobRequest, options?: SubmitOptions): Promise<SubmittedJob>;
  /**
   * Reads a job once (`GET /v3/universal-ai/async/{job_id}`), whatever its status.
   * @throws ServiceApiError `ERR_POLL_ANSWER_MISMATCH` when the answer names another job (in lower
   * case), or `job_id` twice; `ERR_ANSWER_TOO_LARGE` past `maxAnswerBytes`.
   */
  getJob(jobId: string, options?: CallOptions): Promise<JobView>;
  /**
   * Polls a job until it is `success` or `fail` and resolves with that answer. Pauses grow ×1.5
   * from `intervalMs` to `maxIntervalMs`; 429 (after at least its `Retry-After`), 5xx, network
   * errors and request timeouts are retried; 400/401/402/404 and other 4xx reject at once, as do
   * `ERR_POLL_ANSWER_MISMATCH` and `ERR_ANSWER_TOO_LARGE` (see `getJob`).
   * @throws ServiceApiError `ERR_TIMEOUT` when the job is not final within `timeoutMs`.
   */
  pollJob(jobId: string, options?: PollOptions): Promise<FinishedJob>;
  /** The delivery log of the job's webhook (`GET …/{job_id}/deliveries`). */
  getDeliveries(jobId: string, options?: CallOptions): Promise<JobDeliveries>;
  /** Asks the service to deliver the job's webhook again (`POST …/{job_id}/redeliver`, 202). */
  redeliver(jobId: string, options?: CallOptions): Promise<RedeliverAnswer>;
}

/**
 * Creates a client of the async jobs API (spec §4.2, §4.3), with the reference sender's delivery
 * log and redelivery endpoints.
 *
 * @example
 * ```ts
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: process.env.API_KEY! });
 * const { job_id } = await client.submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'https://…/scan.pdf' } });
 * const job = await client.pollJob(job_id, { intervalMs: 1_000 });
 * console.log(job.status === 'success' ? job.output : job.error.message);
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when an option is wrong.
 */
export function createClient(options: ClientOptions): Client {
  const { baseUrl, apiKey, fetch, timeoutMs, userAgent, recipientSecret, ledger, resultDeadlineMs, maxAnswerBytes } =
    resolveClientOptions(options);
  const http: HttpContext = {
    baseUrl,
    headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json', 'user-agent': userAgent },
    fetch,
    maxAnswerBytes,
  };

  async function getJobOnce(jobId: string, requestTimeoutMs: number, signal: AbortSignal | undefined): Promise<JobView> {
    const path = jobPath('getJob', jobId);
    const { status, body, jobIdKeys } = await requestJson(http, { method: 'GET', path, timeoutMs: requestTimeoutMs, signal });
    if (typeof body['job_id'] !== 'string' || typeof body['status'] !== 'string') {
      throw invalidAnswer(`GET ${path}`, status, 'job_id and status');
    }
    checkPollAnswer(jobId, body, jobIdKeys);
    return body as JobView;
  }

  return Object.freeze({
    baseUrl,

    async submitJob(request: SubmitJobRequest, callOptions: SubmitOptions = {}): Promise<SubmittedJob> {
      const withTag = recipientSecret === undefined ? undefined : tagged(request, recipientSecret);
      const body = submissionJson(withTag?.request ?? request);
      const submit = async (): Promise<SubmittedJob> => {
        const { status, body: answer } = await requestJson(http, {
          method: 'POST',
          path: JOBS_PATH,
          body,
          timeoutMs,
          signal: callOptions.signal,
        });
        if (typeof answer['job_id'] !== 'string') throw invalidAnswer(`POST ${JOBS_PATH}`, status, 'job_id');
        return answer as SubmittedJob;
      };
      // Only a job with a webhook is expected back; one without is polled by its submitter.
      if (ledger === undefined || request.webhook_receiver === undefined) return submit();
      const key = callOptions.submissionKey ?? withTag?.nonce;
      return submitWithLedger(ledger, submit, { resultDeadlineMs, ...(key === undefined ? {} : { key }) });
    },

    getJob(jobId: string, callOptions: CallOptions = {}): Promise<JobView> {
      return getJobOnce(jobId, timeoutMs, callOptions.signal);
    },

    async pollJob(jobId: string, pollOptions: PollOptions = {}): Promise<FinishedJob> {
      jobPath('pollJob', jobId);
      const resolved = resolvePollOptions(pollOptions, 'pollJob');
      return pollUntilFinished(jobId, (t, signal) => getJobOnce(jobId, t, signal), timeoutMs, resolved);
    },

    async getDeliveries(jobId: string, callOptions: CallOptions = {}): Promise<JobDeliveries> {
      const path = `${jobPath('getDeliveries', jobId)}/deliveries`;
      const { status, body } = await requestJson(http, { method: 'GET', path, timeoutMs, signal: callOptions.signal });
      if (typeof body['job_id'] !== 'string' || !Array.isArray(body['attempts'])) {
        throw invalidAnswer(`GET ${path}`, status, 'job_id and attempts');
      }
      return body as JobDeliveries;
    },

    async redeliver(jobId: string, callOptions: CallOptions = {}): Promise<RedeliverAnswer> {
      const path = `${jobPath('redeliver', jobId)}/redeliver`;
      const { body } = await requestJson(http, { method: 'POST', path, body: '{}', timeoutMs, signal: callOptions.signal });
      return { ...body, job_id: typeof body['job_id'] === 'string' ? body['job_id'] : jobId } as RedeliverAnswer;
    },
  });
}

/** The job's path, its id escaped; a bad id is a caller's mistake, reported before any request. */
function jobPath(method: string, jobId: unknown): string {
  return `${JOBS_PATH}/${encodeURIComponent(checkJobId(method, jobId))}`;
}

/** The request with a fresh recipient tag in `user_webhook_parameters` when it names a `webhook_receiver`. */
/** The request with its recipient tag, and the tag's nonce (the ledger entry's key); `undefined` without a webhook. */
function tagged(request: SubmitJobRequest, secret: string): { request: SubmitJobRequest; nonce: string } | undefined {
  if (typeof request !== 'object' || request === null || typeof request.webhook_receiver !== 'string') return undefined;
  try {
    const tag = createRecipientTag({ secret, webhookReceiver: request.webhook_receiver });
    return { request: { ...request, user_webhook_parameters: withRecipientTag(request.user_webhook_parameters, tag) }, nonce: tag.nonce };
  } catch (err) {
    if (err instanceof JobhookError) throw new JobhookError(err.code, `submitJob: ${err.message}`, { cause: err });
    throw err;
  }
}

function invalidAnswer(what: string, status: number, fields: string): ServiceApiError {
  return new ServiceApiError('ERR_RESPONSE_INVALID', `${what}: HTTP ${status} answer lacks ${fields}`, { status });
}
