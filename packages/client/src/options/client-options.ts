import { RECEIVER_DEFAULTS } from '@jobhook/core';
import { checkFunction, checkInteger, checkMs, checkObject, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';
import type { JobLedger } from '@jobhook/core/ledger';
import { createRecipientTag } from '@jobhook/core/recipient';
import { packageVersion } from '../package-version.js';
import { DEFAULT_RESULT_DEADLINE_MS } from './ledger-submit-options.js';
import { checkLedger } from './ledger-option.js';

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

/** Options of `createClient`. */
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
   * job id when the service answers (see `submitWithLedger`), so a reconciler can poll the jobs
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

/** {@link ClientOptions} checked, with defaults. @internal */
export interface ResolvedClientOptions {
  /** The base URL without its trailing slashes. */
  baseUrl: string;
  apiKey: string;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
  userAgent: string;
  recipientSecret: string | undefined;
  ledger: JobLedger | undefined;
  resultDeadlineMs: number;
  maxAnswerBytes: number;
}

const WHERE = 'createClient';

/**
 * Checks every option of `createClient` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  checkObject(WHERE, 'options', options);
  const baseUrl = checkBaseUrl(options.baseUrl);
  const { apiKey, fetch = globalThis.fetch, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS } = options;
  // Spec §5: one space after Bearer and no extra spaces or newlines, so no whitespace in the key.
  if (typeof apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(apiKey)) {
    throw optionError(WHERE, 'apiKey must be a non-empty string of printable ASCII without spaces');
  }
  checkFunction(WHERE, 'fetch', fetch, 'a function (the WHATWG fetch)');
  checkMs(WHERE, 'timeoutMs', timeoutMs, { max: MAX_TIMER_MS });
  const { recipientSecret } = options;
  // Checked now, so a short or missing secret fails at startup rather than at the first submission.
  if (recipientSecret !== undefined) {
    try {
      createRecipientTag({ secret: recipientSecret, webhookReceiver: 'https://example.invalid/' });
    } catch {
      throw optionError(
        WHERE,
        'recipientSecret must be one string of at least 16 bytes (e.g. openssl rand -base64 32), the newest during a rotation',
      );
    }
  }
  const { ledger, resultDeadlineMs = DEFAULT_RESULT_DEADLINE_MS, maxAnswerBytes = DEFAULT_MAX_ANSWER_BYTES } = options;
  checkInteger(WHERE, 'maxAnswerBytes', maxAnswerBytes, { min: 2, max: MAX_MAX_ANSWER_BYTES });
  if (ledger !== undefined) checkLedger(WHERE, ledger);
  checkMs(WHERE, 'resultDeadlineMs', resultDeadlineMs, { max: MAX_TIMER_MS });
  const userAgent = options.userAgent ?? `jobhook-client/${packageVersion()}`;
  if (typeof userAgent !== 'string' || userAgent === '' || /[\r\n]/.test(userAgent)) {
    throw optionError(WHERE, 'userAgent must be a non-empty single-line string');
  }
  return { baseUrl, apiKey, fetch, timeoutMs, userAgent, recipientSecret, ledger, resultDeadlineMs, maxAnswerBytes };
}

function checkBaseUrl(value: unknown): string {
  if (typeof value !== 'string') throw optionError(WHERE, 'baseUrl is required (the service URL, e.g. http://127.0.0.1:8080)');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw optionError(WHERE, `baseUrl is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw optionError(WHERE, `baseUrl must be http: or https:, got ${url.protocol}`);
  }
  if (url.search !== '' || url.hash !== '') throw optionError(WHERE, 'baseUrl must not have a query or fragment');
  return url.href.replace(/\/+$/, '');
}
