/** A job store of the tests' own (the engine keeps none), final jobs, and the queue-like attempt loop. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AttemptRecord, Deliverer, DeliveryLog, DeliveryState, DeliverySubject } from '../../src/index.js';

/** A final job as the tests store it: what the deliverer reads, and what the payload shows. */
export interface TestJob extends DeliverySubject {
  status: 'success';
  createdAt: string;
  finishedAt: string;
  /** Exact JSON text of `output`. */
  outputJson: string;
}

/** An in-memory {@link DeliveryLog}, with `create`, `listAttempts` and `startRound` for the tests. */
export interface TestLog extends DeliveryLog<TestJob> {
  create(job: TestJob): Promise<void>;
  listAttempts(jobId: string): Promise<AttemptRecord[]>;
  /** Starts round `round` when the previous one has ended (a redeliver). */
  startRound(jobId: string, round: number): Promise<boolean>;
}

/** Records are copied in and out, as a remote store would. */
export function createTestLog(): TestLog {
  const jobs = new Map<string, TestJob>();
  const attempts = new Map<string, AttemptRecord[]>();
  return {
    async create(job) {
      jobs.set(job.jobId, structuredClone(job));
    },
    async get(jobId) {
      const job = jobs.get(jobId);
      return job && structuredClone(job);
    },
    async appendAttempt(jobId, attempt) {
      attempts.set(jobId, [...(attempts.get(jobId) ?? []), { ...attempt }]);
    },
    async endRound(jobId, round, state: Exclude<DeliveryState, 'pending'>) {
      const job = jobs.get(jobId);
      if (job === undefined || job.delivery !== 'pending' || job.deliveryRound !== round) return false;
      job.delivery = state;
      return true;
    },
    async listAttempts(jobId) {
      return (attempts.get(jobId) ?? []).map((a) => ({ ...a }));
    },
    async startRound(jobId, round) {
      const job = jobs.get(jobId);
      if (
        job === undefined ||
        job.webhookReceiver === null ||
        job.delivery === null ||
        job.delivery === 'pending' ||
        job.deliveryRound !== round - 1
      )
        return false;
      job.delivery = 'pending';
      job.deliveryRound = round;
      return true;
    },
  };
}

/** A final `success` job with a webhook receiver, its delivery pending; overrides win. */
export function finalJob(overrides: Partial<TestJob> = {}): TestJob {
  return {
    jobId: randomUUID(),
    status: 'success',
    // Just now, as isoformat() writes it: receivers refuse events older than their replay window.
    createdAt: new Date(Date.now() - 1500).toISOString().replace('Z', '000+00:00'),
    finishedAt: new Date().toISOString().replace('Z', '000+00:00'),
    outputJson: '{"raw_text":"Hello, world","pages":1}',
    webhookReceiver: 'https://hooks.example.com/jobhook',
    delivery: 'pending',
    deliveryRound: 0,
    ...overrides,
  };
}

/** Stores a final job and returns it. */
export async function seedJob(jobs: TestLog, overrides: Partial<TestJob> = {}): Promise<TestJob> {
  const job = finalJob(overrides);
  await jobs.create(job);
  return job;
}

/** The tests' webhook payload: an `async_job_completed` event of the job (its `output` spliced verbatim). */
export function testPayload(job: TestJob): string {
  const head = JSON.stringify({
    event: 'async_job_completed',
    job_id: job.jobId,
    status: job.status,
    feature: 'ocr',
    subfeature: 'ocr_async',
    provider: 'amazon',
    model: null,
    created_at: job.createdAt,
    finished_at: job.finishedAt,
  });
  return `${head.slice(0, -1)},"output":${job.outputJson}}`;
}

/**
 * Drives one delivery round as the queue does: attempt, and while the outcome is `retry`, wait
 * `nextDelayMs` and make the next attempt.
 */
export async function driveDelivery(deliverer: Deliverer, jobId: string, round = 0, maxAttempts = 20): Promise<AttemptRecord[]> {
  const records: AttemptRecord[] = [];
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const record = await deliverer.attempt({ jobId, round, attempt });
    records.push(record);
    if (record.outcome !== 'retry') return records;
    await sleep(record.nextDelayMs ?? 0);
  }
  throw new Error(`driveDelivery: still retrying after ${maxAttempts} attempts`);
}
