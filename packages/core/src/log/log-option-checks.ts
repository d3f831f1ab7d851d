import { checkMethods } from '../internal/option-checks.js';
import { createJsonLogger, type Logger } from './logger.js';

// The `logger` option of every jobhook factory (core's, the deliverer's, the work queues', the
// client's, the sender's) is checked here, so a logger is refused with the same words everywhere.

const LOGGER_METHODS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * Returns `value` when it has the four pino-style methods, else throws `ERR_OPTION_INVALID` naming `logger`.
 * @internal
 */
export function checkLogger(where: string, value: unknown): Logger {
  return checkMethods<Logger>(where, 'logger', value, LOGGER_METHODS, 'pino-compatible');
}

/**
 * A `logger` option with its default: `fallback()` when absent (JSON lines at `warn` on stderr,
 * {@link createJsonLogger}, unless the factory's default is another), else the value
 * {@link checkLogger} accepts (`null` is refused: it is no logger).
 * @internal
 */
export function resolveLogger(where: string, value: unknown, fallback: () => Logger = createJsonLogger): Logger {
  return value === undefined ? fallback() : checkLogger(where, value);
}
