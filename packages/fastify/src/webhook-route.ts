import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JobhookError, type ReceiverResponse } from '@jobhook/core';
import { bodyAlreadyParsedError, bodyLeftUnread, bodyReadError, capturedRawBody, type AdapterView } from '@jobhook/core/adapter';
import { PLUGIN_NAME } from './plugin-options.js';

/** All methods reach the pipeline, which answers 405 + `Allow: POST` to any but POST (HEAD comes with GET). */
const METHODS = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE'];
const EMPTY = Buffer.alloc(0);
const ALREADY_PARSED_FIX =
  'do not replace request.body on the webhook route (it has its own raw-body parser), or keep the bytes first with captureRawBody(request, reply, bytes)';

function send(reply: FastifyReply, answer: ReceiverResponse): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

function keepRawBody(_request: FastifyRequest, body: Buffer, done: (err: null, body: Buffer) => void): void {
  done(null, body);
}

/**
 * The bytes to verify: the route's own parser hands over a Buffer; a hook that replaced the body
 * with an object must have kept the bytes with `captureRawBody` (on the request or `request.raw`).
 */
function rawBodyOf(request: FastifyRequest): Uint8Array | undefined {
  const { body } = request;
  if (body instanceof Uint8Array) return body;
  if (body === undefined || body === null) return EMPTY; // no body sent (GET, or POST without one)
  return capturedRawBody(request) ?? capturedRawBody(request.raw);
}

/**
 * The encapsulated context holding the webhook route: an `onRequest` hook that answers the refusals
 * needing no body (`precheck`) before the payload is read, its own catch-all raw-body parser
 * (so the app's JSON parser keeps serving every other route) and an error handler that turns
 * Fastify's body errors into the pipeline's answers.
 * @internal
 */
export function webhookRoute(view: AdapterView, path: string) {
  const bodyLimit = view.maxBodyBytes;

  async function jobhookHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const rawBody = rawBodyOf(request);
    const answer =
      rawBody === undefined
        ? view.reject(bodyAlreadyParsedError(PLUGIN_NAME, ALREADY_PARSED_FIX))
        : await view.handle({ method: request.method, headers: request.headers, rawBody });
    if (answer.event !== undefined) request.jobhook = { event: answer.event, outcome: answer.outcome };
    return send(reply, answer);
  }

  /**
   * Runs before the route's parser reads the payload: the checks that need no body answer here, and
   * an announced body left unread closes the connection.
   */
  async function jobhookPrecheck(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const refused = view.precheck({ method: request.method, headers: request.headers });
    if (refused === undefined) return undefined;
    if (bodyLeftUnread(request.raw)) refused.headers['connection'] = 'close';
    return send(reply, refused);
  }

  function jobhookErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const code = typeof error.code === 'string' ? error.code : '';
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      // A Content-Type header Fastify cannot even parse: the pipeline's 415, not Fastify's.
      const type = String(request.headers['content-type']);
      return send(
        reply,
        view.reject(new JobhookError('ERR_UNSUPPORTED_MEDIA_TYPE', `expected Content-Type application/json, got ${type}`)),
      );
    }
    // Over bodyLimit (from Content-Length, or while streaming), length mismatch, client abort.
    if (code.startsWith('FST_ERR_CTP_') || request.raw.readableAborted) {
      return send(reply, view.reject(bodyReadError(error, bodyLimit)));
    }
    throw error; // not ours (a hook of the app): the app's error handler answers
  }

  return async function jobhookRoute(instance: FastifyInstance): Promise<void> {
    instance.decorateRequest('jobhook', undefined);
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, keepRawBody);
    instance.route({
      method: METHODS,
      url: path,
      bodyLimit,
      onRequest: jobhookPrecheck,
      handler: jobhookHandler,
      errorHandler: jobhookErrorHandler,
    });
  };
}
