import { checkInteger, describeValue, optionError } from '@jobhook/core/internal';

/** Options of `sender.listen` (the `Sender` interface spells them out, so its public type names nothing internal). */
export interface ListenOptions {
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
}

/** {@link ListenOptions} checked, with defaults. @internal */
export interface ResolvedListenOptions {
  port: number;
  host: string;
}

/**
 * Checks the options of `sender.listen` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option (led by `createSender`, as the sender's other options).
 * @internal
 */
export function resolveListenOptions(options: ListenOptions = {}): ResolvedListenOptions {
  const { port = 8080, host = '127.0.0.1' } = options;
  checkInteger('createSender', 'listen port', port, { min: 0, max: 65535 });
  if (typeof host !== 'string' || host === '')
    throw optionError('createSender', `listen host must be a non-empty string, got ${describeValue(host)}`);
  return { port, host };
}
