import type { JsonObject } from '@jobhook/core';
import { parseBody, toValue } from '@jobhook/core/json';
import { readCappedBody } from '@jobhook/core/adapter';
import { countTopLevelKey, parseRetryAfter } from '@jobhook/core/internal';
import { codeOfStatus, ServiceApiError } from './service-api-error.js';

/** Longest `Retry-After` honoured: an hour. */
const MAX_RETRY_AFTER_MS = 3_600_000;
/** Largest error body read for its `detail`: the status says what happened, the text only helps. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** What every request of a client shares. @internal */
export interface HttpContext {
  /** Base URL without a trailing slash. */
  baseUrl: string;
  /** Authorization, Accept and User-Agent. */
  headers: Readonly<Record<string, string>>;
  fetch: typeof globalThis.fetch;
  /** Largest 2xx body read (`ClientOptions.maxAnswerBytes`). */
  maxAnswerBytes: number;
}

/** One request. @internal */
export interface RequestSpec {
  method: 'GET' | 'POST';
  /** Path below the base URL, starting with `/`. */
  path: string;
  /** JSON text of the body, for POST. */
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** A 2xx answer. @internal */
export interface JsonAnswer {
  status: number;
  body: JsonObject;
  /** How many top-level `job_id` keys the body's bytes have (more than one: see `checkPollAnswer`). */
  jobIdKeys: number;
}

/**
 * Sends one request and reads its JSON answer. Numbers are read as core reads webhook bodies
 * (exact integers as `bigint`), so a polled result and a webhook payload look the same.
 * The 2xx body is read up to `maxAnswerBytes` (the stream cancelled past it) and parsed by core's
 * lossless parser, whose memory and time are proportional to the bytes (depth bounded).
 * @throws ServiceApiError for a non-2xx answer, no answer (`ERR_NETWORK`), no answer in
 * `timeoutMs` (`ERR_TIMEOUT`), a 2xx body over `maxAnswerBytes` (`ERR_ANSWER_TOO_LARGE`) or that
 * is not a JSON object (`ERR_RESPONSE_INVALID`).
 * Rejects with `spec.signal.reason` when that signal aborts.
 * @internal
 */
export async function requestJson(ctx: HttpContext, spec: RequestSpec): Promise<JsonAnswer> {
  const what = `${spec.method} ${spec.path}`;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), spec.timeoutMs);
  // A separate controller for the timeout tells "too slow" (retryable) apart from the caller's abort.
  const signal = spec.signal === undefined ? timeout.signal : AbortSignal.any([spec.signal, timeout.signal]);
  const headers: Record<string, string> = { ...ctx.headers };
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  let status: number;
  let retryAfter: string | null;
  let location: string | null;
  let bytes: Uint8Array;
  try {
    const response = await ctx.fetch(`${ctx.baseUrl}${spec.path}`, {
      method: spec.method,
      headers,
      ...(spec.body === undefined ? {} : { body: spec.body }),
      signal,
      // Not followed: a redirect of a POST, or to another origin, is no place to send the key to.
      redirect: 'manual',
    });
    status = response.status;
    retryAfter = response.headers.get('retry-after');
    location = response.headers.get('location');
    bytes = status >= 200 && status <= 299 ? await readAnswer(response, ctx.maxAnswerBytes, what) : await readErrorBody(response);
  } catch (cause) {
    if (cause instanceof ServiceApiError) throw cause;
    if (spec.signal?.aborted === true) throw spec.signal.reason;
    if (timeout.signal.aborted) {
      throw new ServiceApiError('ERR_TIMEOUT', `${what}: no answer within ${spec.timeoutMs} ms`, { cause });
    }
    const reason = (cause as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = typeof reason?.code === 'string' ? reason.code : (cause as Error).message;
    throw new ServiceApiError('ERR_NETWORK', `${what}: no answer from ${ctx.baseUrl} (${why})`, { cause });
  } finally {
    clearTimeout(timer);
  }

  if (status < 200 || status > 299) {
    const detail = status >= 300 && status <= 399 ? `redirect to ${location ?? 'nowhere'} not followed` : detailOf(bytes);
    const parsed = parseRetryAfter(retryAfter ?? undefined, Date.now());
    // Longer than an hour is most likely a misconfiguration: wait an hour at most.
    const retryAfterMs = parsed === null ? undefined : Math.min(parsed, MAX_RETRY_AFTER_MS);
    throw new ServiceApiError(codeOfStatus(status), `${what}: HTTP ${status}${detail === undefined ? '' : `: ${detail}`}`, {
      status,
      ...(detail === undefined ? {} : { detail }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (bytes.length === 0) return { status, body: {}, jobIdKeys: 0 };
  try {
    // Nothing is canonicalized: the canonical-size bound that guards verification does not apply.
    const doc = parseBody(bytes, { maxBodyBytes: ctx.maxAnswerBytes, maxCanonicalBytes: Number.MAX_SAFE_INTEGER });
    return { status, body: toValue(doc) as JsonObject, jobIdKeys: countTopLevelKey(doc, 'job_id') };
  } catch (cause) {
    throw new ServiceApiError('ERR_RESPONSE_INVALID', `${what}: HTTP ${status} with a body that is not a JSON object`, {
      status,
      cause,
    });
  }
}

/**
 * A 2xx body, read chunk by chunk and given up (the stream cancelled) past `maxBytes`: a
 * misbehaving server or proxy cannot make the client buffer, nor parse, without bound.
 */
function readAnswer(response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  return readCappedBody(
    response,
    maxBytes,
    () =>
      new ServiceApiError(
        'ERR_ANSWER_TOO_LARGE',
        `${what}: HTTP ${response.status}: the answer is larger than maxAnswerBytes (${maxBytes} bytes); not read further`,
        { status: response.status },
      ),
  );
}

/** An error answer's body for its `detail`, or nothing when it is larger than that needs. */
async function readErrorBody(response: Response): Promise<Uint8Array> {
  const tooLarge = new Error('error body too large');
  try {
    return await readCappedBody(response, MAX_ERROR_BODY_BYTES, () => tooLarge);
  } catch (err) {
    if (err === tooLarge) return new Uint8Array(0);
    throw err;
  }
}

/** The `detail` of an error body (spec §7), or the body text when it is not that JSON; short. */
function detailOf(bytes: Uint8Array): string | undefined {
  if (bytes.length === 0) return undefined;
  const text = Buffer.from(bytes).toString('utf8');
  try {
    const body = JSON.parse(text) as unknown;
    if (typeof body === 'object' && body !== null) {
      const detail = (body as { detail?: unknown }).detail;
      if (typeof detail === 'string') return detail;
      const message = (body as { error?: { message?: unknown } }).error?.message;
      if (typeof message === 'string') return message;
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
