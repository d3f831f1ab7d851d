import type { AdapterOptions } from '@jobhook/core';

/** The plugin's name: fastify-plugin metadata (`app.hasPlugin('@jobhook/fastify')`) and the prefix of its errors. */
export const PLUGIN_NAME = '@jobhook/fastify';

/** Where the webhook route is mounted unless `path` says otherwise. */
export const DEFAULT_PATH = '/webhooks/jobs';

/**
 * Options of {@link jobhookFastify}: `path`, the webhook route's path under the prefix of the context
 * the plugin is registered in. Default `/webhooks/jobs` (Fastify routes a path; unlike the Express and
 * Koa middleware, the plugin has no "every request" mode).
 */
export type FastifyPluginOptions = AdapterOptions;
