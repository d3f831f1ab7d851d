import { describe, expect, it } from 'vitest';
import { checkInteger, checkJobId, checkMs, checkNumber, checkRedisUrl, MAX_TIMER_MS } from '../../src/internal/option-checks.js';
import { bullmqConnection, storeClientOptions } from '../../src/internal/redis-client.js';

/** The message of what `run` throws, after checking it is ERR_OPTION_INVALID. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toMatchObject({ code: 'ERR_OPTION_INVALID' });
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('option checks: the caller first, then the option, then the value', () => {
  it('names the caller and the option, and shows the value', () => {
    expect(refusal(() => checkJobId('redisStore.claim', ''))).toBe(
      'redisStore.claim: jobId must be a non-empty string of at most 200 characters, got ""',
    );
    expect(refusal(() => checkInteger('createRetryPolicy', 'maxRetries', 101, { min: 0, max: 100 }))).toBe(
      'createRetryPolicy: maxRetries must be an integer from 0 to 100, got 101',
    );
    expect(refusal(() => checkMs('pollJob', 'timeoutMs', 1.5, { max: MAX_TIMER_MS }))).toBe(
      `pollJob: timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got 1.5`,
    );
    expect(refusal(() => checkNumber('createRetryPolicy', 'baseMs', Number.NaN, { min: 0 }))).toBe(
      'createRetryPolicy: baseMs must be a finite number >= 0, got NaN',
    );
  });

  it('words an open range by its lower bound', () => {
    expect(refusal(() => checkInteger('q', 'concurrency', 0, { min: 1 }))).toBe('q: concurrency must be a positive integer, got 0');
    expect(refusal(() => checkInteger('q', 'round', -1, { min: 0 }))).toBe('q: round must be a non-negative integer, got -1');
    expect(refusal(() => checkInteger('q', 'maxCanonicalBytes', 1, { min: 2 }))).toBe(
      'q: maxCanonicalBytes must be an integer >= 2, got 1',
    );
  });

  it('returns the value it accepts', () => {
    expect(checkJobId('w', 'job-1')).toBe('job-1');
    expect(checkMs('w', 'leaseMs', MAX_TIMER_MS, { max: MAX_TIMER_MS })).toBe(MAX_TIMER_MS);
    expect(checkRedisUrl('w', 'redis', 'rediss://h:6380/1').port).toBe('6380');
  });

  it('never repeats the password of a refused Redis URL', () => {
    const message = refusal(() => checkRedisUrl('createSender', 'redisUrl', 'http://admin:hunter2-secret@cache:6379/0'));
    expect(message).toBe('createSender: redisUrl must be a redis:// or rediss:// URL, got "http://admin:***@cache:6379/0"');
    expect(message).not.toContain('hunter2-secret');
  });
});

describe('Redis client settings, one per use', () => {
  it('BullMQ workers wait on their commands (maxRetriesPerRequest: null); producers give up', () => {
    expect(bullmqConnection('redis://h:6379', 'worker')).toMatchObject({ url: 'redis://h:6379', maxRetriesPerRequest: null });
    expect(bullmqConnection('redis://h:6379', 'queue').maxRetriesPerRequest).toBe(3);
  });

  it("the store's client queues commands while it connects but fails them at the first failed attempt", () => {
    expect(storeClientOptions(2000)).toMatchObject({ enableOfflineQueue: true, maxRetriesPerRequest: 0, connectTimeout: 2000 });
  });
});
