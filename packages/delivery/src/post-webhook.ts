import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { parseRetryAfter } from '@jobhook/core/internal';
import type { ResolvedAddress } from './host-resolver.js';
import { resolvePostWebhookRequest, type PostWebhookRequest } from './options/post-webhook-options.js';

export type { PostWebhookRequest } from './options/post-webhook-options.js';

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
  const { url, address, body, timeoutMs, maxResponseBytes, maxReadBytes, now, ca } = resolvePostWebhookRequest(req);
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
