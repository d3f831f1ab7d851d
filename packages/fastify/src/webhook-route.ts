import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JobhookError, type Receiver, type ReceiverResponse } from '@jobhook/core';
import {
  bodyAlreadyParsedError,
  bodyLeftUnread,
  capturedRawBody,
  createReceiveFlow,
  internalAnswer,
  readNodeBody,
  type Admission,
  type BodyLimit,
  type ReceiveIo,
} from '@jobhook/core/adapter';
import type { Readable } from 'node:stream';
import { PLUGIN_NAME } from './plugin-options.js';

/** All methods reach the pipeline, which answers 405 + `Allow: POST` to any but POST (HEAD comes with GET). */
const METHODS = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE'];
const EMPTY = Buffer.alloc(0);
const ALREADY_PARSED_FIX =
  'do not replace request.body on the webhook route (it has its own raw-body parser), or keep the bytes first with captureRawBody(request, reply, bytes)';

/**
 * Fastify's side of the receive flow. Its body stage takes what the route's parser read: Fastify
 * runs the parser between the `onRequest` hook and the handler, so by the time the flow asks for
 * the body, it has been read under the admission (`readAdmittedBody`) or has failed into the error
 * handler.
 */
const FASTIFY_IO: ReceiveIo<FastifyRequest, FastifyReply, FastifyReply> = {
  // `request.ip` honours Fastify's `trustProxy`.
  head: (request) => ({ method: request.method, headers: request.headers, clientAddress: request.ip }),
  readBody(request: FastifyRequest): Uint8Array {
    const rawBody = rawBodyOf(request);
    if (rawBody === undefined) throw bodyAlreadyParsedError(PLUGIN_NAME, ALREADY_PARSED_FIX);
    return rawBody;
  },
  bodyLeftUnread: (request) => bodyLeftUnread(request.raw),
  respond(answer: ReceiverResponse, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    if (answer.event !== undefined) request.jobhook = { event: answer.event, outcome: answer.outcome };
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  },
};

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
 * The encapsulated context holding the webhook route, the receive flow's stages on Fastify's
 * hooks: an `onRequest` hook runs the head stage (`receiver.precheck`, the RSA recovery of the
 * signature among its checks) before a byte of the payload is read; its own catch-all parser reads
 * the payload under the admission's `maxBytes` and deadline (so the app's JSON parser keeps serving
 * every other route); the handler runs the receive stage; and an error handler turns the parser's
 * errors into the receiver's answers.
 * @internal
 */
export function webhookRoute(receiver: Receiver, path: string) {
  const flow = createReceiveFlow(receiver, FASTIFY_IO);
  /** Each admitted request's admission, from the precheck to the handler (or the error handler). */
  const admissions = new WeakMap<FastifyRequest, Admission>();

  async function jobhookHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const admission = admissions.get(request);
    if (admission === undefined)
      return FASTIFY_IO.respond(internalAnswer(new Error('no admission for an admitted request')), request, reply);
    return flow.receiveBody(request, admission, reply);
  }

  /** The head stage, before the route's parser reads the payload: a refusal answers here (closing an announced body's connection). */
  async function jobhookPrecheck(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const { refusal, admission } = flow.precheck(request, reply);
    if (admission === undefined) return FASTIFY_IO.respond(refusal, request, reply);
    admissions.set(request, admission);
    return undefined;
  }

  /** The route's parser, the body stage's read: the payload's bytes, read under the admission's limit and deadline. */
  async function readAdmittedBody(request: FastifyRequest, payload: Readable): Promise<Buffer> {
    const admission = admissions.get(request);
    if (admission === undefined) throw new JobhookError('ERR_INTERNAL', `${PLUGIN_NAME}: body of a request the precheck did not admit`);
    // The request's own stream holds to the Content-Length the precheck read; a stream a hook put
    // in its place (decoded, transformed) is held to the size limit only.
    const limit: BodyLimit =
      payload === request.raw
        ? admission
        : {
            maxBytes: admission.maxBytes,
            ...(admission.onDeadline === undefined ? { signal: admission.signal } : { onDeadline: admission.onDeadline.bind(admission) }),
            ...(admission.charge === undefined ? {} : { charge: admission.charge.bind(admission) }),
          };
    return Buffer.from(await readNodeBody(payload, limit));
  }

  /** The body stage's failures, as the parser threw them: the receiver's refusal (`refuseBody`), not Fastify's answer. */
  function jobhookErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const admission = admissions.get(request);
    const code = typeof error.code === 'string' ? error.code : '';
    const ours = error instanceof JobhookError || code.startsWith('FST_ERR_CTP_') || request.raw.readableAborted;
    if (!ours || admission === undefined) throw error; // not ours (a hook of the app): the app's error handler answers
    const refused =
      code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? // A Content-Type header Fastify cannot even parse: the pipeline's 415, not Fastify's.
          new JobhookError(
            'ERR_UNSUPPORTED_MEDIA_TYPE',
            `expected Content-Type application/json, got ${String(request.headers['content-type'])}`,
          )
        : error;
    // Over the limit, timed out, aborted: `refuseBody` closes the connection when the rest of the body is left unread.
    return FASTIFY_IO.respond(flow.refuseBody(request, admission, refused), request, reply);
  }

  return async function jobhookRoute(instance: FastifyInstance): Promise<void> {
    instance.decorateRequest('jobhook', undefined);
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', readAdmittedBody);
    instance.route({
      method: METHODS,
      url: path,
      onRequest: jobhookPrecheck,
      handler: jobhookHandler,
      errorHandler: jobhookErrorHandler,
    });
  };
}
