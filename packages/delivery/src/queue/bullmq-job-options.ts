import type { JobsOptions } from 'bullmq';

/** Names of the two BullMQ queues (under `prefix`). */
export const BULLMQ_QUEUE_NAMES = Object.freeze({ jobs: 'sender-jobs', deliveries: 'sender-deliveries' });

/** A throwing handler is run again this many times in all, after 200 ms then 400 ms. */
const HANDLER_ATTEMPTS = 3;
const HANDLER_BACKOFF_MS = 200;

/**
 * Options of every BullMQ job added. Finished jobs are kept a while and then trimmed, so Redis does
 * not grow without bound. While a job is waiting, delayed or active its id is taken, so an add of
 * the same id is ignored (the dedupe); as long as a finished job is kept, a re-add is ignored too.
 * @internal
 */
export const JOB_OPTIONS: JobsOptions = {
  attempts: HANDLER_ATTEMPTS,
  backoff: { type: 'exponential', delay: HANDLER_BACKOFF_MS },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 24 * 3600, count: 1000 },
};
