/**
 * @jobhook/fastify: a Fastify plugin that receives the service's signed `async_job_completed`
 * webhooks through the `@jobhook/core` receive pipeline, with a route-scoped raw-body parser.
 * @packageDocumentation
 */
import type { AsyncJobCompletedEvent } from '@jobhook/core';
import { jobhook } from './plugin.js';

export { jobhook };
export { DEFAULT_PATH, PLUGIN_NAME, type JobhookPluginOptions, type JobhookRouteOptions } from './plugin-options.js';
export default jobhook;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * On the jobhook webhook route: the event, once its signature verified (set for every answer
     * from then on: handled, duplicate, in flight, handler failed or slow, store unavailable).
     */
    jobhookEvent?: AsyncJobCompletedEvent;
  }
}
