import { silentLogger, type Logger } from '@jobhook/core';
import { resolveLogger } from '@jobhook/core/internal';
import { checkConcurrency } from './work-queue-arguments.js';

/** Options of `createMemoryWorkQueue`. */
export interface MemoryWorkQueueOptions {
  /** Delivery attempts running at once; the others wait, first in first out. Default 16. */
  concurrency?: number;
  /** Where handler failures are logged (pino-compatible). Default: silent. */
  logger?: Logger;
}

/** {@link MemoryWorkQueueOptions} checked, with defaults. @internal */
export type ResolvedMemoryWorkQueueOptions = Required<MemoryWorkQueueOptions>;

const WHERE = 'createMemoryWorkQueue';

/**
 * Checks the options of `createMemoryWorkQueue` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveMemoryWorkQueueOptions(options: MemoryWorkQueueOptions = {}): ResolvedMemoryWorkQueueOptions {
  return {
    concurrency: checkConcurrency(WHERE, options.concurrency),
    logger: resolveLogger(WHERE, options.logger, () => silentLogger),
  };
}
