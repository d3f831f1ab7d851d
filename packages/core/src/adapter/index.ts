/**
 * @jobhook/core/adapter: the kit the framework adapters (@jobhook/express, @jobhook/koa,
 * @jobhook/fastify, core's own `createFetchHandler`) are built with, for writing another one: an
 * adapter runs `receiver.precheck(head)` before reading the body, reads it under the admission's
 * `maxBytes` and `signal`, and hands it to `admission.receive`. An application needs none of it.
 * @packageDocumentation
 */
export { resolveReceiver, type ReceiverOrOptions } from './resolve-receiver.js';
export type { Admission, Precheck, RequestHead } from '../receiver/receiver-types.js';
export { adapterPath, type AdapterOptions } from './adapter-options.js';
export { bodyReadError } from './body-read-error.js';
export { bodyLeftUnread } from './body-left-unread.js';
export { readCappedBody } from './read-capped-body.js';
export type { BodyLimit } from './body-limit.js';
export { readNodeBody } from './read-node-body.js';
export { receiveNodeRequest, type KeptBody } from './receive-node-request.js';
export { bodyAlreadyParsedError, captureRawBody, capturedRawBody } from './raw-body-capture.js';
export { internalAnswer } from './internal-answer.js';
