/**
 * @jobhook/sender: the reference service of the async job webhooks.
 * @packageDocumentation
 */
export type { JobRecord, JobStatus, JobError, JobResult, JobStore, DeliveryState, SimulatePlan } from './jobs/job-record.js';
export type { AttemptOutcome, AttemptRecord, DeliveryTask } from './delivery/delivery-types.js';
export type { WorkHandlers, WorkQueue, WorkQueueCounts } from './queue/work-queue.js';
