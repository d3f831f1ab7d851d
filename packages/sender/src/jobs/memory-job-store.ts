import type { AttemptRecord } from '@jobhook/delivery';
import { canStartRound, type DeliveryState, type JobRecord, type JobResult, type JobStore } from './job-record.js';

/**
 * Jobs and delivery logs in this process's memory: the default, lost on restart.
 * Records are copied in and out so callers never share mutable state with the store, as with Redis.
 *
 * @example
 * ```ts
 * const jobs = createMemoryJobStore();
 * ```
 */
export function createMemoryJobStore(): JobStore {
  const jobs = new Map<string, JobRecord>();
  const attempts = new Map<string, AttemptRecord[]>();
  return {
    async create(job) {
      jobs.set(job.jobId, structuredClone(job));
    },
    async get(jobId) {
      const job = jobs.get(jobId);
      return job && structuredClone(job);
    },
    async finish(jobId, result: JobResult) {
      const job = jobs.get(jobId);
      if (job === undefined || job.status !== 'processing') return undefined;
      Object.assign(job, structuredClone(result));
      return structuredClone(job);
    },
    async setDelivery(jobId, state: DeliveryState, round?: number) {
      const job = jobs.get(jobId);
      if (job === undefined) return;
      job.delivery = state;
      if (round !== undefined) job.deliveryRound = round;
    },
    // Check and set run without an await in between: atomic in this single-threaded process.
    async startRound(jobId, round, redeliveredAt?: string) {
      const job = jobs.get(jobId);
      if (job === undefined || !canStartRound(job, round)) return false;
      job.delivery = 'pending';
      job.deliveryRound = round;
      if (redeliveredAt !== undefined) job.redeliveredAt = redeliveredAt;
      return true;
    },
    async endRound(jobId, round, state) {
      const job = jobs.get(jobId);
      if (job === undefined || job.delivery !== 'pending' || job.deliveryRound !== round) return false;
      job.delivery = state;
      return true;
    },
    async appendAttempt(jobId, attempt) {
      const list = attempts.get(jobId);
      if (list === undefined) attempts.set(jobId, [{ ...attempt }]);
      else list.push({ ...attempt });
    },
    async listAttempts(jobId) {
      return (attempts.get(jobId) ?? []).map((a) => ({ ...a }));
    },
    async close() {},
  };
}
