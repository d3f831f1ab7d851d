import Fastify, { type FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { registerChatRoutes } from './chat-routes.js';
import { httpTimeoutOptions, type HttpTimeouts } from './http-timeouts.js';
import { clientErrorHandler, installErrorHandlers, installJsonParser, MAX_REQUEST_BODY_BYTES } from './http-setup.js';
import { registerJobCountsRoute, registerJobListRoute } from './job-list-route.js';
import { registerJobRoutes } from './job-routes.js';
import { registerManageRoutes } from './manage-routes.js';
import { registerWebhookRoute } from './webhook-route.js';

/**
 * The `/v3` HTTP API as a Fastify instance (routes registered, not listening): universal AI jobs,
 * chat completions, key management, with bearer auth and `{detail}` errors.
 * @internal
 */
export function createApi(context: ApiContext, timeouts: HttpTimeouts): FastifyInstance {
  const app = Fastify({
    logger: false,
    // Without them a client trickling its body one byte at a time holds a connection for good.
    ...httpTimeoutOptions(timeouts),
    bodyLimit: MAX_REQUEST_BODY_BYTES,
    // `/v3/manage/keys/{key_id}/` is written with a slash in the spec, and clients drop it: both work.
    routerOptions: { ignoreTrailingSlash: true },
    clientErrorHandler,
  });
  installJsonParser(app);
  installErrorHandlers(app, context.logger);
  registerJobRoutes(app, context);
  registerJobListRoute(app, context);
  registerJobCountsRoute(app, context);
  registerWebhookRoute(app, context);
  registerManageRoutes(app, context);
  registerChatRoutes(app, context);
  return app;
}
