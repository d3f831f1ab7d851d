import { createJsonLogger, type Logger } from '@jobhook/core';
import { isLogger, optionError } from '@jobhook/core/internal';

/**
 * The `logger` option of the result waiter and the reconciler: `value` when it has the four
 * pino-style methods, JSON lines at `warn` on stderr when absent; else throws naming `logger`.
 * @internal
 */
export function resolveLogger(where: string, value: unknown): Logger {
  const logger = value ?? createJsonLogger();
  if (!isLogger(logger)) throw optionError(where, 'logger must have debug, info, warn and error methods (pino-compatible)');
  return logger;
}
