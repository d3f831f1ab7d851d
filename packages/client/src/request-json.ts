import type { JsonObject } from '@jobhook/core';
import { parseBody, toValue } from '@jobhook/core/json';
import { readCappedBody } from '@jobhook/core/adapter';
import { parseRetryAfter } from '@jobhook/core/internal';

/** Longest `Retry-After` honoured: an hour. */
const MAX_RETRY_AFTER_MS = 3_600_000;
import { codeOfStatus, ServiceApiError } from './service-api-error.js';

/** Largest answer body read: poll answers carry job outputs, which may be big, but not unbounded. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** What every request of a client shares. @internal */
export interface HttpContext {
  /** Base URL without a trailing slash. */
  baseUrl: string;
  /** Authorization, Accept and User-Agent. */
  headers: Readonly<Record<string, string>>;
  fetch: typeof globalThis.fetch;
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

/**
 * Sends one request and reads its JSON answer. Numbers are read as core reads webhook bodies
 * (exact integers as `bigint`), so a polled result and a webhook payload look the same.
 * @throws ServiceApiError for a non-2xx answer, no answer (`ERR_NETWORK`), no answer in
 * `timeoutMs` (`ERR_TIMEOUT`) or a 2xx body that is not a JSON object (`ERR_RESPONSE_INVALID`).
 * Rejects with `spec.signal.reason` when that signal aborts.
 * @internal
 */
export async function requestJson(ctx: HttpContext, spec: RequestSpec): Promise<{ status: number; body: JsonObject }> {
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
    bytes = await readCapped(response, MAX_RESPONSE_BYTES);
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
  if (bytes.length === 0) return { status, body: {} };
  try {
    return { status, body: toValue(parseBody(bytes, { maxBodyBytes: MAX_RESPONSE_BYTES })) as JsonObject };
  } catch (cause) {
    throw new ServiceApiError('ERR_RESPONSE_INVALID', `${what}: HTTP ${status} with a body that is not a JSON object`, {
      status,
      cause,
    });
  }
}

/**
 * The body, read chunk by chunk and given up (the stream cancelled) past `maxBytes`: a misbehaving
 * server or proxy cannot make the client buffer without bound.
 */
function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  return readCappedBody(
    response,
    maxBytes,
    () =>
      new ServiceApiError('ERR_RESPONSE_INVALID', `HTTP ${response.status}: the answer is larger than ${maxBytes} bytes`, {
        status: response.status,
      }),
  );
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
