// The reference service's GET /metrics after real deliveries: submit → simulated job → signed
// webhook to a real receiver (one answering 503 then 200, one answering 410) → scrape.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AttemptRecord } from '@jobhook/delivery';
import { sampleSum } from '../../../core/test/helpers/prometheus-text.js';
import type { Sender } from '../../src/index.js';
import { deliveryResult } from '../../src/metrics/sender-metrics.js';
import {
  pollUntilFinal,
  startReceiver,
  startTestSender,
  submitJob,
  TOKENS,
  waitFor,
  type TestReceiver,
} from '../sender/sender-fixtures.js';

let sender: Sender;
let baseUrl: string;
let flaky: TestReceiver;
let gone: TestReceiver;

beforeAll(async () => {
  ({ sender, baseUrl } = await startTestSender());
  flaky = await startReceiver(sender.publicKeyPem, (index) => (index === 0 ? 503 : undefined));
  gone = await startReceiver(sender.publicKeyPem, () => 410);
});
afterAll(async () => {
  await sender.close();
  await flaky.close();
  await gone.close();
});

const T = TOKENS.uncapped;

async function scrape(): Promise<{ contentType: string | null; text: string; status: number }> {
  const res = await fetch(`${baseUrl}/metrics`);
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

async function deliver(url: string): Promise<string> {
  const body = { model: 'ocr/ocr_async/google', input: { file: 'https://files.example.com/scan.pdf' }, webhook_receiver: url };
  const submitted = await submitJob(baseUrl, T, body);
  expect(submitted.status).toBe(201);
  const jobId = submitted.json.job_id as string;
  await pollUntilFinal(baseUrl, T, jobId);
  return jobId;
}

describe('GET /metrics of the sender', () => {
  test('answers every result at 0 before any delivery, without a bearer token', async () => {
    const { status, contentType, text } = await scrape();
    expect(status).toBe(200);
    expect(contentType).toBe(sender.metrics.contentType);
    for (const result of ['delivered', 'rejected', 'retry', 'failed']) {
      expect(text).toContain(`jobhook_sender_deliveries_total{result="${result}"} 0`);
    }
  });

  test('counts a retry then a delivery, and a rejection, with one duration sample per attempt', async () => {
    await deliver(flaky.url);
    await deliver(gone.url);
    // The job is final before its delivery ends: wait for the attempts' records to be counted.
    await waitFor(async () => sampleSum((await scrape()).text, 'jobhook_sender_deliveries_total') === 3, 'three counted attempts');
    const { text } = await scrape();
    const total = 'jobhook_sender_deliveries_total';
    expect(sampleSum(text, total, { result: 'retry' })).toBe(1);
    expect(sampleSum(text, total, { result: 'delivered' })).toBe(1);
    expect(sampleSum(text, total, { result: 'rejected' })).toBe(1);
    expect(sampleSum(text, total, { result: 'failed' })).toBe(0);
    const hist = 'jobhook_sender_delivery_attempt_duration_seconds';
    expect(sampleSum(text, `${hist}_count`)).toBe(3);
    expect(sampleSum(text, `${hist}_bucket`, { result: 'delivered', le: '+Inf' })).toBe(1);
    expect(flaky.requests.map((r) => r.status)).toEqual([200, 200]); // the pipeline verified both; the first was answered 503
  });
});

describe('deliveryResult', () => {
  // Only the fields deliveryResult reads matter; the cast keeps the test to them.
  const record = (outcome: AttemptRecord['outcome'], error: string | null): AttemptRecord =>
    ({ round: 0, attempt: 1, durationMs: 1, statusCode: null, error, outcome, nextDelayMs: null }) as AttemptRecord;

  test('refusals before sending get their own result; tasks never attempted are not counted', () => {
    expect(deliveryResult(record('delivered', null))).toBe('delivered');
    expect(deliveryResult(record('retry', 'ECONNREFUSED'))).toBe('retry');
    expect(deliveryResult(record('rejected', null))).toBe('rejected');
    expect(deliveryResult(record('rejected', 'redirect_not_followed'))).toBe('rejected');
    expect(deliveryResult(record('rejected', 'ssrf_refused'))).toBe('ssrf_refused');
    expect(deliveryResult(record('rejected', 'payload_invalid'))).toBe('payload_invalid');
    for (const error of ['stale_round', 'round_ended', 'job_not_found', 'no_receiver']) {
      expect(deliveryResult(record('rejected', error))).toBeUndefined();
    }
  });
});
