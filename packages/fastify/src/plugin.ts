import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { JobhookError } from '@jobhook/core';
import { PLUGIN_NAME, resolvePluginOptions, type JobhookPluginOptions } from './plugin-options.js';
import { webhookRoute } from './webhook-route.js';

async function jobhookPlugin(fastify: FastifyInstance, options: JobhookPluginOptions): Promise<void> {
  const { path, receiver, ownsReceiver } = resolvePluginOptions(options);
  const url = `${fastify.prefix}${path}`;
  if (fastify.hasRoute({ method: 'POST', url })) {
    throw new JobhookError(
      'ERR_OPTION_INVALID',
      `${PLUGIN_NAME}: POST ${url} is already routed; is the plugin registered twice on this path? Give each registration its own path`,
    );
  }
  if (ownsReceiver) fastify.addHook('onClose', async () => receiver.close());
  await fastify.register(webhookRoute(receiver, path));
}

/**
 * The Fastify plugin: mounts `POST <path>` (default `/webhooks/jobs`) running the jobhook receive
 * pipeline on the raw body bytes. The route gets its own raw-body parser in an encapsulated
 * context, so the app's JSON parser keeps serving every other route. The verified event is on
 * `request.jobhookEvent`.
 *
 * Options: `path`, plus either `receiver` (from `createReceiver`) or the receiver options themselves
 * (`publicKeys`, `onSuccess`, `onFail`, `store`, ...). A receiver created from options is closed
 * with the server. Registering twice on one path fails at `ready()` with `ERR_OPTION_INVALID`.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { jobhook } from '@jobhook/fastify';
 * const app = Fastify();
 * app.register(jobhook, {
 *   publicKeys: readFileSync('service-public.pem'),
 *   onSuccess: async (event) => saveResult(event.job_id, event.output),
 * });
 * await app.listen({ port: 3000 });
 * ```
 */
export const jobhook: FastifyPluginAsync<JobhookPluginOptions> = fp(jobhookPlugin, {
  name: PLUGIN_NAME,
  fastify: '5.x',
});
