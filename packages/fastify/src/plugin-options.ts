import type { AdapterOptions, Receiver, ReceiverOrOptions } from '@jobhook/core';
import { adapterPath, resolveReceiver } from '@jobhook/core/adapter';

/** The plugin's name: fastify-plugin metadata (`app.hasPlugin('@jobhook/fastify')`) and the prefix of its errors. */
export const PLUGIN_NAME = '@jobhook/fastify';

/** Where the webhook route is mounted unless `path` says otherwise. */
export const DEFAULT_PATH = '/webhooks/jobs';

/**
 * Options of `jobhookFastify`: `path`, the webhook route's path under the prefix of the context
 * the plugin is registered in. Default `/webhooks/jobs` (Fastify routes a path; unlike the Express and
 * Koa middleware, the plugin has no "every request" mode).
 */
export type FastifyPluginOptions = AdapterOptions;

/** The arguments of `jobhookFastify` checked, with defaults. @internal */
export interface ResolvedFastifyPluginOptions {
  receiver: Receiver;
  /** True when the receiver was made here from options: the plugin closes it with the server. */
  ownsReceiver: boolean;
  path: string;
}

/**
 * Resolves the receiver (or creates it from its options) and checks `path`, through core's adapter kit.
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID`, the message led by `@jobhook/fastify:`.
 * @internal
 */
export function resolveFastifyPluginOptions(
  receiverOrOptions: ReceiverOrOptions,
  options: FastifyPluginOptions | undefined,
): ResolvedFastifyPluginOptions {
  const ownsReceiver = typeof (receiverOrOptions as { handle?: unknown } | null)?.handle !== 'function';
  const receiver = resolveReceiver(receiverOrOptions, PLUGIN_NAME);
  const path = adapterPath(options, PLUGIN_NAME) ?? DEFAULT_PATH;
  return { receiver, ownsReceiver, path };
}
