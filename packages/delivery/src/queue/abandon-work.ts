import type { Logger } from '@jobhook/core';
import type { QueuedWork, WorkHandlers } from './work-queue.js';

/**
 * Hands work whose handler failed for good to `handlers.abandoned` (when given), so the service can
 * put the job or delivery in a final state instead of leaving it `processing` / `pending` forever.
 * Never throws: what the hook throws is logged, because a queue must go on with its other work.
 * @internal
 */
export async function abandonWork(where: string, handlers: WorkHandlers, work: QueuedWork, err: unknown, logger: Logger): Promise<void> {
  if (handlers.abandoned === undefined) return;
  try {
    await handlers.abandoned(work, err);
  } catch (hookErr) {
    logger.error({ err: hookErr, work }, `${where}: abandoned handler failed`);
  }
}
