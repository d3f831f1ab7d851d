/** Final job records and the queue-like attempt loop of the delivery tests. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Deliverer, AttemptRecord } from '@jobhook/delivery';
import type { JobRecord, JobStore } from '../../src/jobs/job-record.js';

/** A final (`success` by default) job with a webhook receiver; overrides win. */
export function finalJob(overrides: Partial<JobRecord> = {}): JobRecord {
  return {
    jobId: randomUUID(),
    organizationId: 'org-1',
    keyId: null,
    feature: 'ocr',
    subfeature: 'ocr_async',
    provider: 'amazon',
    model: null,
    status: 'success',
    createdAt: '2024-05-01T10:00:00.000000+00:00',
    finishedAt: '2024-05-01T10:00:01.500000+00:00',
    inputJson: '{"file":"https://example.com/scan.png"}',
    webhookReceiver: 'https://hooks.example.com/jobhook',
    userParametersJson: null,
    showOriginalResponse: false,
    simulate: {},
    outputJson: '{"raw_text":"Hello, world","pages":1}',
    error: null,
    originalResponseJson: '{"Blocks":[]}',
    cost: '0.01',
    delivery: 'pending',
    deliveryRound: 0,
    ...overrides,
  };
}

/** Stores a final job and returns it. */
export async function seedJob(jobs: JobStore, overrides: Partial<JobRecord> = {}): Promise<JobRecord> {
  const job = finalJob(overrides);
  await jobs.create(job);
  return job;
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
