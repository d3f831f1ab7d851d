/** Final job records of the sender's delivery tests. */
import { randomUUID } from 'node:crypto';
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
    // Just now, as isoformat() writes it: receivers refuse events older than their replay window.
    createdAt: new Date(Date.now() - 1500).toISOString().replace('Z', '000+00:00'),
    finishedAt: new Date().toISOString().replace('Z', '000+00:00'),
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
