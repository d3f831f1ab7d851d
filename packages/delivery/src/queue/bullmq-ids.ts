import type { DeliveryTask } from '../delivery-types.js';

/** BullMQ job id of a job's completion: `job-{jobId}`. @internal */
export const bullmqJobId = (jobId: string): string => `job-${jobId}`;

/**
 * BullMQ job id of one delivery attempt: `delivery-{jobId}-{round}-{attempt}`. BullMQ 6 refuses
 * custom ids with `:` (unless split in exactly three parts, its legacy repeat format) and plain
 * integers; `-` is accepted, and since round and attempt are the last two integers, distinct
 * triples give distinct ids even though UUIDs contain `-`. @internal
 */
export const bullmqDeliveryId = (task: DeliveryTask): string => `delivery-${task.jobId}-${task.round}-${task.attempt}`;
