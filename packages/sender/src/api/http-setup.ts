import type { Socket } from 'node:net';
import { isJobhookError, type Logger } from '@jobhook/core';
import { parseBody, toLosslessValue } from '@jobhook/core/json';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';
import { isJsonObject, type LosslessObject } from './json-values.js';

/** Request bodies above this are answered 413. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

const JSON_TYPE = 'application/json; charset=utf-8';
/** `Retry-After` (seconds) of a 503 for a full memory job store. */
const STORE_FULL_RETRY_AFTER_S = 5;

function detailBody(detail: string): string {
  return JSON.stringify({ detail });
}

/**
 * Makes `application/json` the only accepted request body type, parsed from the raw bytes with
 * core's lossless parser (`1.0` stays a float written `1.0`, 2^70 stays exact, duplicate keys keep
 * the last value as Python does). An empty body parses to `undefined`: routes that need a body say so.
 * Any other content type is answered 415; over {@link MAX_REQUEST_BODY_BYTES}, 413; bad JSON, 400.
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: MAX_REQUEST_BODY_BYTES }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new ApiError(415, `the body must be UTF-8 JSON; charset ${charset} is not supported`), undefined);
      return;
    }
    const bytes = body as Buffer;
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    try {
      // No canonical bound (core's default, 16 × the body): request bodies are read into values,
      // never canonicalized. What a submission makes canonicalized later, its webhook payload, is
      // bounded by the submit route, which names the field at fault.
      done(null, toLosslessValue(parseBody(bytes, { maxBodyBytes: MAX_REQUEST_BODY_BYTES, maxCanonicalBytes: Number.MAX_SAFE_INTEGER })));
    } catch (err) {
      if (isJobhookError(err)) {
        const status = err.code === 'ERR_BODY_TOO_LARGE' ? 413 : 400;
        const detail = err.code === 'ERR_BODY_NOT_OBJECT' ? 'the body must be a JSON object' : `malformed JSON body: ${err.message}`;
        done(new ApiError(status, detail), undefined);
        return;
      }
      done(err as Error, undefined);
    }
  });
}

/** The parsed JSON object body of a request; 415 without a JSON body, 400 when it is empty. */
export function jsonObjectBody(request: FastifyRequest): LosslessObject {
  const body = request.body;
  if (body === undefined || body === null) {
    const type = request.headers['content-type'];
    if (type === undefined) throw new ApiError(415, 'the body must be a JSON object sent with Content-Type: application/json');
    throw new ApiError(400, 'the body must be a JSON object; it was empty');
  }
  if (!isJsonObject(body)) throw new ApiError(400, 'the body must be a JSON object');
  return body;
}

/**
 * Every error answer of the API is `{ "detail": "..." }` (spec §7): route errors, Fastify's own
 * (413, 415, bad content length), unknown routes (404), and unexpected failures (500, logged).
 */
export function installErrorHandlers(app: FastifyInstance, logger: Logger): void {
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    reply
      .code(404)
      .type(JSON_TYPE)
      .send(detailBody(`no route ${request.method} ${path.slice(0, 200)}`));
  });
  app.setErrorHandler((error, request, reply) => {
    // Answered before the body was read (auth failed, body too large): close the connection, or a
    // client still uploading keeps it busy and a graceful close() waits for it.
    if (!request.raw.complete) reply.header('connection', 'close');
    if (error instanceof ApiError) {
      reply.code(error.statusCode).headers(error.headers).type(JSON_TYPE).send(detailBody(error.message));
      return;
    }
    const code = (error as { code?: unknown }).code;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      reply
        .code(413)
        .type(JSON_TYPE)
        .send(detailBody(`the body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`));
      return;
    }
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      reply.code(415).type(JSON_TYPE).send(detailBody('the body must be JSON: Content-Type: application/json'));
      return;
    }
    // A full memory job store: 503 with a hint of when to try again (jobs finish within seconds by default).
    if (isJobhookError(error, 'ERR_STORE_FULL')) {
      reply.code(503).header('retry-after', String(STORE_FULL_RETRY_AFTER_S)).type(JSON_TYPE).send(detailBody(error.message));
      return;
    }
    // A store outage is the service's, not the caller's, and passes: 503 says "try again".
    if (isJobhookError(error) && (error.status < 500 || error.code === 'ERR_STORE_UNAVAILABLE')) {
      reply.code(error.status).type(JSON_TYPE).send(detailBody(error.message));
      return;
    }
    const status = (error as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      reply
        .code(status)
        .type(JSON_TYPE)
        .send(detailBody((error as Error).message));
      return;
    }
    logger.error({ err: error, method: request.method, url: request.url }, 'unexpected error answering a request');
    reply.code(500).type(JSON_TYPE).send(detailBody('internal error'));
  });
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses (CR or LF inside a header
 * value, a malformed request line) never reach a route; they get a 400 `{detail}` too, and the
 * connection is closed. Headers over Node's limit get 431; a request that did not arrive within
 * `requestTimeoutMs` / `headersTimeoutMs` gets 408.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['431 Request Header Fields Too Large', 'request headers too large']
      : // Node's requestTimeout / headersTimeout: the request did not arrive in time (a slow client).
        error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['408 Request Timeout', "the request did not arrive within the server's timeout"]
        : ['400 Bad Request', `malformed HTTP request (${error.code ?? 'parse error'})`];
  const body = detailBody(detail);
  socket.end(
    `HTTP/1.1 ${status}\r\n` +
      `Content-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
