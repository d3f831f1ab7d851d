import { JobhookError, type Logger } from '@jobhook/core';
import { isLogger } from '@jobhook/core/internal';
import type { DeliveryTask } from '../delivery-types.js';
import type { WorkHandlers } from './work-queue.js';

/** Default number of delivery attempts running at once. */
export const DEFAULT_QUEUE_CONCURRENCY = 16;

function invalid(where: string, message: string): JobhookError {
  return new JobhookError('ERR_OPTION_INVALID', `${where}: ${message}`);
}

/** `value` when it is a positive integer, else the default; throws on anything else. @internal */
export function checkConcurrency(where: string, value: unknown, name = 'concurrency', fallback = DEFAULT_QUEUE_CONCURRENCY): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalid(where, `${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/** Throws unless `value` has the four pino-style methods. @internal */
export function checkLogger(where: string, value: unknown): Logger {
  if (!isLogger(value)) throw invalid(where, 'logger must have debug, info, warn and error methods (pino-compatible)');
  return value;
}

/** A delay in ms: a finite number >= 0 (fractions allowed). @internal */
export function checkDelay(where: string, delayMs: unknown): number {
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw invalid(where, `delayMs must be a finite number >= 0, got ${String(delayMs)}`);
  }
  return delayMs;
}

/** A job id as queues accept it: a non-empty string of at most 200 characters. @internal */
export function checkJobId(where: string, jobId: unknown): string {
  if (typeof jobId !== 'string' || jobId.length === 0 || jobId.length > 200) {
    throw invalid(where, `jobId must be a 1-200 character string, got ${JSON.stringify(jobId)}`);
  }
  return jobId;
}

/** A copy of the task's three members, checked (round >= 0, attempt >= 1, integers). @internal */
export function checkTask(where: string, task: DeliveryTask): DeliveryTask {
  const jobId = checkJobId(where, task?.jobId);
  const { round, attempt } = task;
  if (!Number.isSafeInteger(round) || round < 0) throw invalid(where, `round must be an integer >= 0, got ${String(round)}`);
  if (!Number.isSafeInteger(attempt) || attempt < 1) throw invalid(where, `attempt must be an integer >= 1, got ${String(attempt)}`);
  return { jobId, round, attempt };
}

/** Throws unless `h` has `runJob` and `deliver` functions, and `abandoned` is a function when given. @internal */
export function checkHandlers(where: string, h: WorkHandlers): WorkHandlers {
  if (typeof h?.runJob !== 'function' || typeof h.deliver !== 'function')
    throw invalid(where, 'start() needs runJob and deliver functions');
  if (h.abandoned !== undefined && typeof h.abandoned !== 'function')
    throw invalid(where, 'start(): abandoned must be a function when given');
  return h;
}
