import { describe, expect, it } from 'vitest';
import { validateEvent } from '@jobhook/core';
import { buildWebhookPayload } from '../../src/jobs/webhook-payload.js';
import { finalJob } from '../helpers/delivery-jobs.js';

const ALWAYS = ['event', 'job_id', 'status', 'feature', 'subfeature', 'provider', 'model', 'created_at', 'finished_at'];

describe('buildWebhookPayload (spec §6.2)', () => {
  it('success: the always-present fields, then output; no error', () => {
    const job = finalJob({ model: 'textract-2024' });
    const text = buildWebhookPayload(job);
    const payload = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual([...ALWAYS, 'output']);
    expect(payload).toMatchObject({
      event: 'async_job_completed',
      job_id: job.jobId,
      status: 'success',
      feature: 'ocr',
      subfeature: 'ocr_async',
      provider: 'amazon',
      model: 'textract-2024',
      created_at: job.createdAt,
      finished_at: job.finishedAt,
      output: { raw_text: 'Hello, world', pages: 1 },
    });
    expect(text).toBe(JSON.stringify(payload)); // compact
    expect(() => validateEvent(JSON.parse(text))).not.toThrow();
  });

  it('fail: error {message, error_code}, no output; model null stays null', () => {
    const job = finalJob({ status: 'fail', outputJson: null, error: { message: 'Provider timed out', error_code: 'provider_timeout' } });
    const payload = JSON.parse(buildWebhookPayload(job)) as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual([...ALWAYS, 'error']);
    expect(payload['error']).toEqual({ message: 'Provider timed out', error_code: 'provider_timeout' });
    expect(payload['model']).toBeNull();
    const noCode = JSON.parse(buildWebhookPayload(finalJob({ status: 'fail', outputJson: null, error: { message: 'boom' } }))) as Record<
      string,
      unknown
    >;
    expect(noCode['error']).toEqual({ message: 'boom' });
  });

  it('original_response only when requested', () => {
    expect(buildWebhookPayload(finalJob())).not.toContain('original_response');
    const shown = JSON.parse(buildWebhookPayload(finalJob({ showOriginalResponse: true }))) as Record<string, unknown>;
    expect(shown['original_response']).toEqual({ Blocks: [] });
  });

  it('user_parameters absent when not set, spliced byte for byte when set', () => {
    expect(buildWebhookPayload(finalJob())).not.toContain('user_parameters');
    const params = '{"f":1.0,"tiny":1e-7,"huge":1.5e300,"big":1180591620717411303424,"neg":-18446744073709551616,"s":"é 😀 中文 \\u00e9"}';
    const text = buildWebhookPayload(finalJob({ userParametersJson: params }));
    expect(text).toContain(`"user_parameters":${params}`);
    expect(text.endsWith(`"user_parameters":${params}}`)).toBe(true);
    // An empty object is set, not absent.
    expect(buildWebhookPayload(finalJob({ userParametersJson: '{}' }))).toContain('"user_parameters":{}');
  });

  it('output is spliced verbatim too', () => {
    const output = '{"score":1.0,"n":123456789012345678901234567890}';
    expect(buildWebhookPayload(finalJob({ outputJson: output }))).toContain(`"output":${output}`);
  });

  it('throws for a job that is not final', () => {
    expect(() => buildWebhookPayload(finalJob({ status: 'processing', finishedAt: null, outputJson: null }))).toThrow(
      expect.objectContaining({ code: 'ERR_INTERNAL' }),
    );
  });
});
