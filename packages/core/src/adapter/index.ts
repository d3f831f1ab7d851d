/**
 * @jobhook/core/adapter: the kit the framework adapters (@jobhook/express, @jobhook/koa,
 * @jobhook/fastify, core's own `createFetchHandler`) are built with, for writing another one.
 * An application needs none of it.
 * @packageDocumentation
 */
export { resolveReceiver, type ReceiverOrOptions } from './resolve-receiver.js';
export { adapterView, type AdapterView, type RequestHead } from '../receiver/adapter-view.js';
export { adapterPath, type AdapterOptions } from './adapter-options.js';
export { bodyReadError } from './body-read-error.js';
export { bodyLeftUnread } from './body-left-unread.js';
export { readCappedBody } from './read-capped-body.js';
export { bodyAlreadyParsedError, captureRawBody, capturedRawBody } from './raw-body-capture.js';
