/**
 * @jobhook/fastify: a Fastify plugin that receives the service's signed `async_job_completed`
 * webhooks through the `@jobhook/core` receive pipeline, with a route-scoped raw-body parser.
 * @packageDocumentation
 */
import type { VerifiedWebhook } from '@jobhook/core';

export { jobhookFastify, type FastifyWebhookPlugin } from './plugin.js';
export type { FastifyPluginOptions } from './plugin-options.js';
export { captureRawBody } from '@jobhook/core/adapter';
export type { Receiver, ReceiverOptions, ReceiverOrOptions, VerifiedWebhook } from '@jobhook/core';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * On the jobhook webhook route: `{ event, outcome }`, once the signature verified (set for every
     * answer from then on: handled, duplicate, in flight, handler failed or slow, store unavailable).
     */
    jobhook?: VerifiedWebhook;
  }
}
