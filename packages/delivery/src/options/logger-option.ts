import type { Logger } from '@jobhook/core';
import { isLogger, optionError } from '@jobhook/core/internal';

/**
 * Returns `value` when it has the four pino-style methods, else throws naming `logger`: the one
 * logger check of the deliverer and the work queues (the kit has none yet).
 * @internal
 */
export function checkLogger(where: string, value: unknown): Logger {
  if (!isLogger(value)) throw optionError(where, 'logger must have debug, info, warn and error methods (pino-compatible)');
  return value;
}
