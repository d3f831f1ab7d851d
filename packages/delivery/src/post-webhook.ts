import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { checkInteger, MAX_TIMER_MS, optionError, parseRetryAfter } from '@jobhook/core/internal';
import type { ReceiverTarget, ResolvedAddress } from './ssrf-guard.js';

/** Default `maxReadBytes` of {@link postWebhook}: an answer's body is read (counted) this far at most. */
export const DEFAULT_MAX_READ_BYTES = 64 * 1024;

/** One webhook POST. */
export interface PostWebhookRequest {
  /** The receiver URL, already checked by the SSRF guard. */
  url: URL;
  /**
   * The address the guard checked: the connection goes there and nowhere else (then to its
   * `fallbacks`, in order, when it refuses: `localhost`'s `::1`).
   */
  address: ReceiverTarget;
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
  /** Covers connect, TLS, sending, the answer's status line and headers, and reading its body; 1 to 2^31-1. */
  timeoutMs: number;
  /** Bytes of the answer's body kept (for the attempt record); the rest is counted and discarded. Default 1024. */
  maxResponseBytes?: number;
  /**
   * Reading the answer's body stops after this many bytes (then `bodyComplete` is false): an
   * endless answer costs neither memory nor time beyond it. At least `maxResponseBytes`. Default 65536.
   */
  maxReadBytes?: number;
  /** Clock (ms) of `answeredAt`. Default `Date.now`. */
  now?: () => number;
  /** Extra trusted CA certificates (PEM) for `https:` receivers, e.g. a private CA. Default Node's. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
}

/** What one POST gave. */
export type PostWebhookResult =
  | {
      kind: 'response';
      statusCode: number;
      /** `Retry-After` in ms, null when absent or unreadable. */
      retryAfterMs: number | null;
      /** `Location` of a 3xx (not followed), else null. */
      location: string | null;
      /** The start of the answer's body, at most `maxResponseBytes` bytes. */
      body: Buffer;
      /** `body` decoded as UTF-8 (invalid sequences replaced). */
      bodyText: string;
      /** Bytes of the body read: all of it when `bodyComplete`, else what arrived before reading stopped. */
      bodyBytes: number;
      /** Whether the body ended within `maxReadBytes` and the deadline. */
      bodyComplete: boolean;
      /** `now()` when the status line and headers arrived. */
      answeredAt: number;
    }
  | {
      kind: 'error';
      /** Node's error code (`ECONNREFUSED`, `ECONNRESET`, `CERT_HAS_EXPIRED`, ...) or `timeout`. */
      code: string;
      message: string;
      answeredAt: number;
    };

/**
 * POSTs a webhook once with `node:http`/`node:https`: the socket connects to `address` through a
 * pinned `lookup` (no second DNS lookup, so DNS rebinding between the check and the connection
 * cannot redirect it), TLS still checks the certificate against the URL's host name (`servername`),
 * redirects are not followed, and one timer bounds the attempt (the socket is destroyed when it
 * fires). Never rejects: network problems come back as `kind: 'error'`.
 *
 * @example
 * ```ts
 * const address = await guard.resolveTarget(url);
 * const result = await postWebhook({ url: new URL(url), address, body, headers, timeoutMs: 30_000 });
 * ```
 */
export function postWebhook(req: PostWebhookRequest): Promise<PostWebhookResult> {
  const {
    url,
    address,
    body,
    timeoutMs,
    maxResponseBytes = 1024,
    maxReadBytes = Math.max(DEFAULT_MAX_READ_BYTES, maxResponseBytes),
    now = Date.now,
    ca,
  } = req;
  if (
    !Number.isSafeInteger(maxResponseBytes) ||
    maxResponseBytes < 0 ||
    !Number.isSafeInteger(maxReadBytes) ||
    maxReadBytes < maxResponseBytes
  ) {
    throw optionError('postWebhook', 'maxResponseBytes and maxReadBytes must be integers with 0 <= maxResponseBytes <= maxReadBytes');
  }
  // The timer would fire at once beyond 2^31-1 ms, and never with NaN: both are caller bugs.
  checkInteger('postWebhook', 'timeoutMs', timeoutMs, { min: 1, max: MAX_TIMER_MS });
  const pinnedAddresses: ResolvedAddress[] = [address, ...(address.fallbacks ?? [])].map((a) => ({ address: a.address, family: a.family }));
  const pinnedLookup: LookupFunction = (_hostname, options, callback) => {
    // Node 20 asks for every address (`all`) when it races IPv4 and IPv6 (autoSelectFamily), and
    // then tries the next one when a connection is refused: the fallbacks go there, after the first.
    if ((options as { all?: boolean }).all === true) {
      (callback as unknown as (err: null, addresses: ResolvedAddress[]) => void)(null, pinnedAddresses);
    } else callback(null, address.address, address.family);
  };
  const isHttps = url.protocol === 'https:';
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const options: RequestOptions & { servername?: string; ca?: string | Buffer | Array<string | Buffer> } = {
    method: 'POST',
    host: hostname,
    port: url.port === '' ? (isHttps ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: { ...req.headers, Host: url.host, 'Content-Length': String(body.byteLength), Connection: 'close' },
    lookup: pinnedLookup,
    // A fresh connection per attempt: a pooled socket could be one opened to another address.
    agent: false,
  };
  // SNI carries names only (RFC 6066), without the trailing dot of an absolute name.
  if (isHttps && isIP(hostname) === 0) options.servername = hostname.replace(/\.$/, '');
  if (isHttps && ca !== undefined) options.ca = typeof ca === 'string' || Buffer.isBuffer(ca) ? ca : [...ca];

  return new Promise((resolve) => {
    let settled = false;
    // Set once the status line arrived: from then on the answer is what counts, whatever the body does.
    let answer: Extract<PostWebhookResult, { kind: 'response' }> | undefined;
    const finish = (result: PostWebhookResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
      client.destroy();
    };
    const fail = (err: Error & { code?: unknown }): void => {
      if (answer !== undefined) {
        finish(answer);
        return;
      }
      finish({ kind: 'error', code: typeof err.code === 'string' ? err.code : 'network_error', message: err.message, answeredAt: now() });
    };
    const client = (isHttps ? httpsRequest : httpRequest)(options);
    const timer = setTimeout(() => fail(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'timeout' })), timeoutMs);
    client.on('error', fail);
    client.on('response', (res: IncomingMessage) => {
      const answeredAt = now();
      const statusCode = res.statusCode ?? 0;
      const location = statusCode >= 300 && statusCode < 400 ? (res.headers.location ?? null) : null;
      const retryAfterMs = parseRetryAfter(res.headers['retry-after'], answeredAt);
      const empty = Buffer.alloc(0);
      const got: Extract<PostWebhookResult, { kind: 'response' }> = {
        kind: 'response',
        statusCode,
        retryAfterMs,
        location,
        body: empty,
        bodyText: '',
        bodyBytes: 0,
        bodyComplete: false,
        answeredAt,
      };
      answer = got;
      readCapped(res, maxResponseBytes, maxReadBytes, got, () => finish(got));
    });
    client.end(body);
  });
}

/**
 * Keeps the first `keepBytes` of the answer's body in `into` and counts the rest without keeping
 * it, then calls `done` once: at the end of the body, after `readBytes`, or on an error. The status
 * is what counts, so a body cut short is no failure; the attempt timer ends a body that never ends
 * (`into` then holds what arrived).
 */
function readCapped(
  res: IncomingMessage,
  keepBytes: number,
  readBytes: number,
  into: { body: Buffer; bodyText: string; bodyBytes: number; bodyComplete: boolean },
  done: () => void,
): void {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let called = false;
  const end = (complete: boolean): void => {
    if (called) return;
    called = true;
    into.bodyComplete = complete;
    done();
  };
  res.on('data', (chunk: Buffer) => {
    if (called) return;
    if (keptBytes < keepBytes) {
      const part = chunk.subarray(0, keepBytes - keptBytes);
      kept.push(part);
      keptBytes += part.length;
      into.body = Buffer.concat(kept);
      into.bodyText = into.body.toString('utf8');
    }
    into.bodyBytes += chunk.length;
    if (into.bodyBytes > readBytes) end(false);
  });
  res.on('end', () => end(true));
  res.on('error', () => end(false));
  res.on('close', () => end(false));
}
