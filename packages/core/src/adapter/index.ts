/**
 * @jobhook/core/adapter: the kit the framework adapters (@jobhook/express, @jobhook/koa,
 * @jobhook/fastify, core's own `createFetchHandler`) are built with, for writing another one. Each
 * runs the one receive flow (`createReceiveFlow`): `receiver.precheck(head)` before reading the
 * body, the body read under the admission, then `admission.receive`, the answer written; an adapter
 * gives only how to read the head and the body and how to write the answer. An application needs
 * none of it.
 * @packageDocumentation
 */
export { adapterPath, resolveReceiver, type AdapterOptions, type ReceiverOrOptions } from './adapter-option-checks.js';
export type { Admission, Precheck, RequestHead } from '../receiver/receiver-types.js';
export { bodyReadError } from './body-read-error.js';
export { bodyLeftUnread } from './body-left-unread.js';
export { readCappedBody } from './read-capped-body.js';
export type { BodyLimit } from './body-limit.js';
export { readNodeBody } from './read-node-body.js';
export { createReceiveFlow, type ReceiveFlow, type ReceiveIo } from './receive-flow.js';
export { nodeBodyIo, receiveNodeRequest, type KeptBody } from './receive-node-request.js';
export { bodyAlreadyParsedError, captureRawBody, capturedRawBody } from './raw-body-capture.js';
export { internalAnswer } from './internal-answer.js';
