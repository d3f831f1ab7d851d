import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Receiver, ReceiverOrOptions } from '@jobhook/core';
import { optionError } from '@jobhook/core/internal';
import { PLUGIN_NAME, resolveFastifyPluginOptions, type FastifyPluginOptions } from './plugin-options.js';
import { webhookRoute } from './webhook-route.js';

/** The plugin, with the receiver it runs (for `stats()` and `close()`). */
export type FastifyWebhookPlugin = FastifyPluginAsync & { readonly receiver: Receiver };

/**
 * Creates the Fastify plugin, to `app.register(...)`: it mounts `<path>` (default `/webhooks/jobs`)
 * running the jobhook receive pipeline on the raw body bytes: the checks that need no body (the RSA
 * recovery of the signature among them) run in its `onRequest` hook, so a refused request's body is
 * never read. The route gets its own raw-body parser (the declared length or `maxBodyBytes`, within
 * `bodyTimeoutMs`) in an encapsulated context, so the app's JSON parser keeps serving every other route. Once the
 * signature verified, `request.jobhook` is `{ event, outcome }`, whatever the answer.
 *
 * The receiver is resolved now (a configuration mistake throws here, with `@jobhook/fastify:` in the
 * message); a receiver created from options is closed with the server. Registering twice on one path
 * fails at `ready()` with `ERR_OPTION_INVALID`.
 *
 * @param receiverOrOptions a `Receiver` from `createReceiver`, or the options to create one.
 * @param options `path`: the route's path under the registering context's prefix.
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID` at construction.
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { jobhookFastify } from '@jobhook/fastify';
 * const app = Fastify();
 * app.register(jobhookFastify({
 *   publicKeys: readFileSync('service-public.pem'),
 *   onSuccess: async (event) => saveResult(event.job_id, event.output),
 * }, { path: '/webhooks/jobs' }));
 * await app.listen({ port: 3000 });
 * ```
 */
export function jobhookFastify(receiverOrOptions: ReceiverOrOptions, options?: FastifyPluginOptions): FastifyWebhookPlugin {
  const { receiver, ownsReceiver, path } = resolveFastifyPluginOptions(receiverOrOptions, options);

  async function jobhookPlugin(fastify: FastifyInstance): Promise<void> {
    const url = `${fastify.prefix}${path}`;
    // Not an option's value but the app's state at registration (Fastify knows its routes only then).
    if (fastify.hasRoute({ method: 'POST', url })) {
      throw optionError(
        PLUGIN_NAME,
        `POST ${url} is already routed; is the plugin registered twice on this path? Give each registration its own path`,
      );
    }
    if (ownsReceiver) fastify.addHook('onClose', async () => receiver.close());
    await fastify.register(webhookRoute(receiver, path));
  }

  // fastify-plugin: the route lands in the registering context (its prefix, its hooks), named for hasPlugin().
  return Object.assign(fp(jobhookPlugin, { name: PLUGIN_NAME, fastify: '5.x' }), { receiver });
}
