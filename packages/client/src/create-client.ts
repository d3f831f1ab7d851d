import { readFileSync } from 'node:fs';
import { JobhookError, RECEIVER_DEFAULTS } from '@jobhook/core';
import { checkInteger, checkJobId, checkMs, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';
import { stringifyJson } from '@jobhook/core/json';
import { createRecipientTag, withRecipientTag } from '@jobhook/core/recipient';
import type { FinishedJob, JobDeliveries, JobView, RedeliverAnswer, SubmitJobRequest, SubmittedJob } from './job-types.js';
import { checkPollAnswer } from './poll-answer.js';
import { pollUntilFinished, resolvePollOptions, type PollOptions } from './poll-job.js';
import { requestJson, type HttpContext } from './request-json.js';
import { ServiceApiError } from './service-api-error.js';
import { isJobLedger, type JobLedger } from '@jobhook/core/ledger';
import { DEFAULT_RESULT_DEADLINE_MS, submitWithLedger, type LedgerSubmitOptions } from './submit-with-ledger.js';

/** Default of {@link ClientOptions.timeoutMs}. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * Default of {@link ClientOptions.maxAnswerBytes}: 4 MiB, 4 × the receiver's default `maxBodyBytes`
 * (`RECEIVER_DEFAULTS.maxBodyBytes`), so a result the default receiver refused 413 (which the
 * service never retries) still comes through the poll fallback up to 4 MiB; and small enough that
 * the costliest answer under it (`[{},{},…]`, one object per 3 bytes) stays near +190 MB of memory
 * and under 2 s of parsing (bench group `poll-answer`).
 */
export const DEFAULT_MAX_ANSWER_BYTES = 4 * RECEIVER_DEFAULTS.maxBodyBytes;
/** Largest `maxAnswerBytes` accepted: 1 GiB. */
const MAX_MAX_ANSWER_BYTES = 2 ** 30;

/** The async jobs API, below the base URL. */
const JOBS_PATH = '/v3/universal-ai/async';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Where the service is, e.g. `https://api.example.com` or `http://127.0.0.1:8080`. A path prefix is kept. Required. */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <apiKey>`. Required. */
  apiKey: string;
  /** The `fetch` to use. Default: the global `fetch` (Node's undici). */
  fetch?: typeof globalThis.fetch;
  /** Time allowed for one request (answer and body), ms. Default 30,000. */
  timeoutMs?: number;
  /** `User-Agent` header. Default `jobhook-client/<version>`. */
  userAgent?: string;
  /**
   * The secret your receiver checks recipient tags with (its `recipientSecret`; during a rotation,
   * the new one). Every submission with a `webhook_receiver` then carries a fresh tag in
   * `user_webhook_parameters.jobhook_recipient`, bound to that URL and the submission time, so your
   * receiver can tell your jobs from another organization's aimed at its URL. At least 16 bytes.
   * Default none: nothing is added.
   */
  recipientSecret?: string;
  /**
   * The expected-jobs ledger (`createMemoryLedger`, `createRedisLedger`, `createPostgresLedger`):
   * every `submitJob` with a `webhook_receiver` writes a pending entry before the request and its
   * job id when the service answers (see {@link submitWithLedger}), so a reconciler can poll the jobs
   * whose result never arrives. With `recipientSecret`, the entry's key is the tag's nonce. Default: none.
   */
  ledger?: JobLedger;
  /** With `ledger`: how long after its submission a job without a handled result is polled, ms. Default 600,000 (10 minutes). */
  resultDeadlineMs?: number;
  /**
   * Largest answer read, in bytes (poll answers carry job outputs): a longer one is cut off while
   * streaming and fails with `ERR_ANSWER_TOO_LARGE`, so `pollJob` and the result waiter reject and
   * the reconciler abandons the job (reason `answer-too-large`, logged with the job id so a person
   * can fetch it). Parsing an answer costs up to ~45× its size in memory for the costliest shape
   * (`[{},{},…]`). Keep it at least your receiver's `maxBodyBytes`: the poll is the fallback for a
   * result the receiver refused 413. Default 4 MiB ({@link DEFAULT_MAX_ANSWER_BYTES}).
   */
  maxAnswerBytes?: number;
}

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
  const owner = 'createClient';
  if (typeof options !== 'object' || options === null) throw optionError(owner, 'options must be an object');
  const baseUrl = checkBaseUrl(options.baseUrl);
  const { apiKey, fetch = globalThis.fetch, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS } = options;
  // Spec §5: one space after Bearer and no extra spaces or newlines, so no whitespace in the key.
  if (typeof apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(apiKey)) {
    throw optionError(owner, 'apiKey must be a non-empty string of printable ASCII without spaces');
  }
  if (typeof fetch !== 'function') throw optionError(owner, 'fetch must be a function (the WHATWG fetch)');
  checkMs(owner, 'timeoutMs', timeoutMs, { max: MAX_TIMER_MS });
  const { recipientSecret } = options;
  // Checked now, so a short or missing secret fails at startup rather than at the first submission.
  if (recipientSecret !== undefined) {
    try {
      createRecipientTag({ secret: recipientSecret, webhookReceiver: 'https://example.invalid/' });
    } catch {
      throw optionError(
        owner,
        'recipientSecret must be one string of at least 16 bytes (e.g. openssl rand -base64 32), the newest during a rotation',
      );
    }
  }
  const { ledger, resultDeadlineMs = DEFAULT_RESULT_DEADLINE_MS, maxAnswerBytes = DEFAULT_MAX_ANSWER_BYTES } = options;
  checkInteger(owner, 'maxAnswerBytes', maxAnswerBytes, { min: 2, max: MAX_MAX_ANSWER_BYTES });
  if (ledger !== undefined && !isJobLedger(ledger))
    throw optionError(owner, 'ledger must be a JobLedger (createMemoryLedger, createRedisLedger, ...)');
  checkMs(owner, 'resultDeadlineMs', resultDeadlineMs, { max: MAX_TIMER_MS });
  const userAgent = options.userAgent ?? `jobhook-client/${packageVersion()}`;
  if (typeof userAgent !== 'string' || userAgent === '' || /[\r\n]/.test(userAgent)) {
    throw optionError(owner, 'userAgent must be a non-empty single-line string');
  }
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

function checkBaseUrl(value: unknown): string {
  if (typeof value !== 'string') throw optionError('createClient', 'baseUrl is required (the service URL, e.g. http://127.0.0.1:8080)');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw optionError('createClient', `baseUrl is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw optionError('createClient', `baseUrl must be http: or https:, got ${url.protocol}`);
  }
  if (url.search !== '' || url.hash !== '') throw optionError('createClient', 'baseUrl must not have a query or fragment');
  return url.href.replace(/\/+$/, '');
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

/** The submission's JSON text, numbers exact (bigint, RawJson). */
function submissionJson(request: SubmitJobRequest): string {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw optionError('submitJob', 'request must be an object with model and input');
  }
  if (typeof request.model !== 'string' || request.model === '') {
    throw optionError('submitJob', 'request.model must be a non-empty string (<feature>/<subfeature>/<provider>)');
  }
  const input: unknown = request.input;
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw optionError('submitJob', 'request.input must be an object');
  try {
    return stringifyJson(request);
  } catch (cause) {
    throw optionError('submitJob', `request cannot be written as JSON: ${(cause as Error).message}`, { cause });
  }
}

function invalidAnswer(what: string, status: number, fields: string): ServiceApiError {
  return new ServiceApiError('ERR_RESPONSE_INVALID', `${what}: HTTP ${status} answer lacks ${fields}`, { status });
}

let version: string | undefined;

/** Read once, lazily: importing the package should not touch the file system. */
function packageVersion(): string {
  if (version === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
      version = typeof pkg.version === 'string' ? pkg.version : '0';
    } catch {
      version = '0';
    }
  }
  return version;
}
