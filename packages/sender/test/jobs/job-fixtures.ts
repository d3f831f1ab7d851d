// Job records and attempts for the JobStore tests.
import { randomUUID } from 'node:crypto';
import type { AttemptRecord } from '@jobhook/delivery';
import type { JobRecord, JobResult } from '../../src/jobs/job-record.js';

/** Exact JSON texts a store must give back byte for byte (floats, big integers, unicode, escapes). */
export const EXACT_INPUT_JSON =
  '{"file":"https://example.test/a.wav","language":"fr","note":"h\u00e9llo \ud83c\udf0d \\u2028 \\"q\\"","ratio":1.0,"big":123456789012345678901234567890}';
export const EXACT_PARAMS_JSON = '{"caf\u00e9":[1.50,2e10,-0.0],"nested":{"\u65e5\u672c":null}}';

export function buildJob(overrides: Partial<JobRecord> = {}): JobRecord {
  return {
    jobId: randomUUID(),
    organizationId: 'org-\u00e9\u00e8',
    keyId: randomUUID(),
    feature: 'audio',
    subfeature: 'speech_to_text_async',
    provider: 'openai',
    model: null,
    status: 'processing',
    createdAt: '2024-05-01T10:00:00.123+00:00',
    finishedAt: null,
    inputJson: EXACT_INPUT_JSON,
    webhookReceiver: 'https://receiver.test/hook?x=1',
    userParametersJson: EXACT_PARAMS_JSON,
    showOriginalResponse: true,
    simulate: { outcome: 'success', delayMs: 1500, outputJson: '{"text":"\u2603 1.10"}' },
    outputJson: null,
    error: null,
    originalResponseJson: null,
    cost: null,
    delivery: 'pending',
    deliveryRound: 0,
    ...overrides,
  };
}

export function successResult(text = 'bonjour \u{1F600}'): JobResult {
  return {
    status: 'success',
    finishedAt: '2024-05-01T10:00:01.500+00:00',
    outputJson: JSON.stringify({ text }).replace('}', ',"score":0.10}'),
    error: null,
    originalResponseJson: '{"raw":[1.0,2.50]}',
    cost: '0.01',
  };
}

export const failResult: JobResult = {
  status: 'fail',
  finishedAt: '2024-05-01T10:00:02.000+00:00',
  outputJson: null,
  error: { message: 'provider timed out', error_code: 'provider_timeout' },
  originalResponseJson: '{"error":"timeout"}',
  cost: '0.00',
};

export function buildAttempt(attempt: number, overrides: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    round: 0,
    attempt,
    startedAt: `2024-05-01T10:00:0${attempt}.000+00:00`,
    durationMs: 12.5,
    url: 'https://receiver.test/hook',
    address: '203.0.113.7',
    statusCode: 503,
    error: null,
    errorMessage: null,
    outcome: 'retry',
    nextDelayMs: 1000 * attempt,
    ...overrides,
  };
}
