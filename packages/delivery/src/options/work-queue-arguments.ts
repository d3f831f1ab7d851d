import { checkInteger, checkJobId, checkNumber, optionError } from '@jobhook/core/internal';
import type { DeliveryTask } from '../delivery-types.js';
import type { WorkHandlers } from '../queue/work-queue.js';

// The arguments of the work queues' methods (`scheduleJob`, `enqueueDelivery`, `start`), checked
// alike by the memory and the BullMQ queue.

/** Default number of delivery attempts running at once. */
export const DEFAULT_QUEUE_CONCURRENCY = 16;

/** `value` when it is a positive integer, else the default; throws on anything else. @internal */
export function checkConcurrency(where: string, value: unknown, name = 'concurrency', fallback = DEFAULT_QUEUE_CONCURRENCY): number {
  return value === undefined ? fallback : checkInteger(where, name, value, { min: 1 });
}

/** A delay in ms: a finite number >= 0 (fractions allowed). @internal */
export function checkDelay(where: string, delayMs: unknown): number {
  return checkNumber(where, 'delayMs', delayMs, { min: 0 });
}

/** A copy of the task's three members, checked (round >= 0, attempt >= 1, integers). @internal */
export function checkTask(where: string, task: DeliveryTask): DeliveryTask {
  const jobId = checkJobId(where, task?.jobId);
  const round = checkInteger(where, 'round', task.round, { min: 0 });
  const attempt = checkInteger(where, 'attempt', task.attempt, { min: 1 });
  return { jobId, round, attempt };
}

/** Throws unless `h` has `runJob` and `deliver` functions, and `abandoned` is a function when given. @internal */
export function checkHandlers(where: string, h: WorkHandlers): WorkHandlers {
  if (typeof h?.runJob !== 'function' || typeof h.deliver !== 'function')
    throw optionError(where, 'start() needs runJob and deliver functions');
  if (h.abandoned !== undefined && typeof h.abandoned !== 'function')
    throw optionError(where, 'start(): abandoned must be a function when given');
  return h;
}

/** A job id the BullMQ queue can carry: `checkJobId`, and no `:`. @internal */
export function checkBullmqJobId(where: string, jobId: unknown): string {
  const id = checkJobId(where, jobId);
  if (id.includes(':')) throw optionError(where, `jobId must not contain ':' (BullMQ refuses it in ids), got ${JSON.stringify(id)}`);
  return id;
}
