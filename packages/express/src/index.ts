/**
 * @jobhook/express: Express middleware for the service's signed async job webhooks. It reads the raw
 * body, runs the `@jobhook/core` receive pipeline (verify, dedupe, handler) and writes its answer.
 * @packageDocumentation
 */
export { createExpressMiddleware, type ExpressMiddlewareOptions, type ExpressWebhookMiddleware } from './create-express-middleware.js';
export { captureRawBody } from '@jobhook/core/adapter';
export type { Receiver, ReceiverOptions, ReceiverOrOptions, VerifiedWebhook } from '@jobhook/core';
