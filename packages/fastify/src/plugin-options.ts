import { JobhookError, resolveReceiver, type Receiver, type ReceiverOptions } from '@jobhook/core';

/** The plugin's name: fastify-plugin metadata (`app.hasPlugin(...)`) and the prefix of its errors. */
export const PLUGIN_NAME = '@jobhook/fastify';

/** Where the webhook route is mounted unless `path` says otherwise. */
export const DEFAULT_PATH = '/webhooks/jobs';

/** Options common to both forms of {@link JobhookPluginOptions}. */
export interface JobhookRouteOptions {
  /** Path of the webhook route, under the prefix of the context the plugin is registered in. Default `/webhooks/jobs`. */
  path?: string;
}

/**
 * Options of the plugin: the route path, plus either a receiver you made (`{ receiver }`) or the
 * options of `createReceiver` (`{ publicKeys, onSuccess, ... }`), not both.
 */
export type JobhookPluginOptions = JobhookRouteOptions &
  ({ receiver: Receiver; publicKeys?: never } | (ReceiverOptions & { receiver?: never }));

/** Options after checks. @internal */
export interface ResolvedPluginOptions {
  path: string;
  receiver: Receiver;
  /** True when the plugin created the receiver, so it closes it with the server. */
  ownsReceiver: boolean;
}

function fail(message: string): never {
  throw new JobhookError('ERR_OPTION_INVALID', `${PLUGIN_NAME}: ${message}`);
}

/**
 * Checks the options and creates the receiver when given its options, so a configuration mistake
 * fails at `app.ready()` / `app.listen()` with the plugin's name in the message.
 * @internal
 */
export function resolvePluginOptions(options: JobhookPluginOptions): ResolvedPluginOptions {
  if (typeof options !== 'object' || options === null) fail(`expected options, got ${String(options)}`);
  const { path = DEFAULT_PATH, receiver, ...receiverOptions } = options as JobhookRouteOptions & {
    receiver?: unknown;
  } & Partial<ReceiverOptions>;
  if (typeof path !== 'string' || !path.startsWith('/')) fail(`path must be a string starting with "/", got ${JSON.stringify(path)}`);
  if (receiver === undefined) {
    return { path, receiver: resolveReceiver(receiverOptions as ReceiverOptions, PLUGIN_NAME), ownsReceiver: true };
  }
  if (typeof (receiver as Partial<Receiver> | null)?.handle !== 'function') fail('receiver must be a Receiver made by createReceiver()');
  if (receiverOptions.publicKeys !== undefined) fail('give either receiver or receiver options (publicKeys, onSuccess, ...), not both');
  return { path, receiver: receiver as Receiver, ownsReceiver: false };
}
