import type { Middleware } from 'koa';
import type { ReceiverOrOptions } from '@jobhook/core';
import { createKoaMiddleware, type JobhookState } from './create-koa-middleware.js';

/** The part of an `@koa/router` `Router` that {@link jobhookRoute} uses. */
export interface RouterLike {
  all(path: string, middleware: Middleware<JobhookState>): unknown;
}

/**
 * Registers the webhook route on an `@koa/router` router, for every method: POST runs the pipeline,
 * and any other method gets the pipeline's 405 with `Allow: POST` and a JSON error body. Returns the
 * router, for chaining.
 *
 * @param router an `@koa/router` `Router` (or anything with `all(path, middleware)`).
 * @param path the webhook path, e.g. `/webhooks/jobs`.
 * @param receiverOrOptions a `Receiver`, or the options of `createReceiver` (checked now).
 * @example
 * ```ts
 * const router = new Router();
 * jobhookRoute(router, '/webhooks/jobs', { publicKeys: pem, onSuccess });
 * app.use(router.routes()).use(router.allowedMethods());
 * ```
 */
export function jobhookRoute<R extends RouterLike>(router: R, path: string, receiverOrOptions: ReceiverOrOptions): R {
  router.all(path, createKoaMiddleware(receiverOrOptions));
  return router;
}
