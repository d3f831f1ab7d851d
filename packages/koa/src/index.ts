/**
 * @jobhook/koa: Koa middleware (and an `@koa/router` route) that receives the service's signed
 * `async_job_completed` webhooks through the `@jobhook/core` pipeline.
 * @packageDocumentation
 */
export {
  createKoaMiddleware,
  type JobhookState,
  type KoaMiddlewareOptions,
  type KoaWebhookMiddleware,
} from './create-koa-middleware.js';
export type { Receiver, ReceiverOptions, ReceiverOrOptions, VerifiedWebhook } from '@jobhook/core';
export { jobhookRoute, type RouterLike } from './jobhook-route.js';
