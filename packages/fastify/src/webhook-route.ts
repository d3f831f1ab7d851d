import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JobhookError, type Receiver, type ReceiverResponse } from '@jobhook/core';
import {
  bodyAlreadyParsedError,
  bodyLeftUnread,
  bodyReadError,
  capturedRawBody,
  internalAnswer,
  readNodeBody,
  type Admission,
  type BodyLimit,
  type Precheck,
} from '@jobhook/core/adapter';
import type { Readable } from 'node:stream';
import { PLUGIN_NAME } from './plugin-options.js';

/** All methods reach the pipeline, which answers 405 + `Allow: POST` to any but POST (HEAD comes with GET). */
const METHODS = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE'];
const EMPTY = Buffer.alloc(0);
const ALREADY_PARSED_FIX =
  'do not replace request.body on the webhook route (it has its own raw-body parser), or keep the bytes first with captureRawBody(request, reply, bytes)';

function send(reply: FastifyReply, answer: ReceiverResponse): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
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
 * The encapsulated context holding the webhook route: an `onRequest` hook that runs
 * `receiver.precheck` (the RSA recovery of the signature among its checks) before a byte of the
 * payload is read, its own catch-all parser that reads the payload under the admission's
 * `maxBytes` and deadline (so the app's JSON parser keeps serving every other route), and an error
 * handler that turns body errors into the pipeline's answers.
 * @internal
 */
export function webhookRoute(receiver: Receiver, path: string) {
  /** Each admitted request's admission, from the precheck to the handler (or the error handler). */
  const admissions = new WeakMap<FastifyRequest, Admission>();

  async function jobhookHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const admission = admissions.get(request);
    if (admission === undefined) return send(reply, internalAnswer(new Error('no admission for an admitted request')));
    const rawBody = rawBodyOf(request);
    const answer =
      rawBody === undefined ? admission.refuse(bodyAlreadyParsedError(PLUGIN_NAME, ALREADY_PARSED_FIX)) : await admission.receive(rawBody);
    if (answer.event !== undefined) request.jobhook = { event: answer.event, outcome: answer.outcome };
    return send(reply, answer);
  }

  /**
   * Runs before the route's parser reads the payload: a refusal answers here, and an announced body
   * left unread closes the connection.
   */
  async function jobhookPrecheck(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    let checked: Precheck;
    try {
      // `request.ip` honours Fastify's `trustProxy`.
      checked = receiver.precheck({ method: request.method, headers: request.headers, clientAddress: request.ip });
    } catch (err) {
      checked = { refusal: internalAnswer(err) };
    }
    const { refusal, admission } = checked;
    if (admission !== undefined) {
      admissions.set(request, admission);
      return undefined;
    }
    if (bodyLeftUnread(request.raw)) refusal.headers['connection'] = 'close';
    return send(reply, refusal);
  }

  /** The route's parser: the payload's bytes, read under the admission's limit and deadline. */
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

  function jobhookErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const admission = admissions.get(request);
    const code = typeof error.code === 'string' ? error.code : '';
    const ours = error instanceof JobhookError || code.startsWith('FST_ERR_CTP_') || request.raw.readableAborted;
    if (!ours || admission === undefined) throw error; // not ours (a hook of the app): the app's error handler answers
    const answer =
      code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? // A Content-Type header Fastify cannot even parse: the pipeline's 415, not Fastify's.
          admission.refuse(
            new JobhookError(
              'ERR_UNSUPPORTED_MEDIA_TYPE',
              `expected Content-Type application/json, got ${String(request.headers['content-type'])}`,
            ),
          )
        : admission.refuse(bodyReadError(error, admission.maxBytes));
    // Over the limit, timed out, aborted: the rest of the body is not read.
    if (bodyLeftUnread(request.raw)) answer.headers['connection'] = 'close';
    return send(reply, answer);
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
