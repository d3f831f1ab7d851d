import { checkJobId, optionError } from '@jobhook/core/internal';
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

/** A job id the BullMQ queue can carry: {@link checkJobId}, and no `:`. @internal */
export function checkBullmqJobId(where: string, jobId: unknown): string {
  const id = checkJobId(where, jobId);
  if (id.includes(':')) throw optionError(where, `jobId must not contain ':' (BullMQ refuses it in ids), got ${JSON.stringify(id)}`);
  return id;
}
