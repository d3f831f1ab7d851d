/**
 * Every option that becomes a timer is refused beyond 2^31-1 ms (setTimeout would fire at once),
 * with ERR_OPTION_INVALID naming the option.
 */
import { describe, expect, it } from 'vitest';
import { createTestKeyPair } from '@jobhook/core/testing';
import { MAX_TIMER_MS } from '@jobhook/core/internal';
import { createBullmqWorkQueue, createDeliverer, createRetryPolicy, createSsrfGuard, postWebhook } from '../src/index.js';
import { createTestLog, testPayload } from './helpers/test-jobs.js';

const keys = createTestKeyPair();
const TOO_LONG = 3e9;

describe('timer options are bounded by 2^31-1 ms', () => {
  it('createDeliverer: attemptTimeoutMs 3e9 is refused, 2^31-1 accepted', () => {
    const base = {
      jobs: createTestLog(),
      payload: testPayload,
      privateKey: keys.privateKey,
      policy: createRetryPolicy(),
      guard: createSsrfGuard(),
    };
    expect(() => createDeliverer({ ...base, attemptTimeoutMs: TOO_LONG })).toThrow(
      expect.objectContaining({
        code: 'ERR_OPTION_INVALID',
        message: expect.stringContaining(`attemptTimeoutMs must be an integer from 1 to ${MAX_TIMER_MS}, got 3000000000`),
      }),
    );
    expect(() => createDeliverer({ ...base, attemptTimeoutMs: MAX_TIMER_MS })).not.toThrow();
  });

  it('createRetryPolicy: capMs 3e9 is refused (baseMs above it too), 2^31-1 accepted', () => {
    expect(() => createRetryPolicy({ capMs: TOO_LONG })).toThrow(
      expect.objectContaining({
        code: 'ERR_OPTION_INVALID',
        message: expect.stringContaining('capMs must be a finite number from baseMs to 2147483647'),
      }),
    );
    expect(() => createRetryPolicy({ baseMs: TOO_LONG, capMs: TOO_LONG })).toThrow(
      expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringContaining('capMs') }),
    );
    expect(createRetryPolicy({ capMs: MAX_TIMER_MS, baseMs: MAX_TIMER_MS, random: () => 1 }).nextDelayMs(1, null)).toBe(MAX_TIMER_MS);
  });

  it('createBullmqWorkQueue: lockDurationMs 3e9 is refused before any connection', async () => {
    // Port 1: nothing listens there; the option check comes first, so no connection is tried.
    await expect(createBullmqWorkQueue({ connection: 'redis://127.0.0.1:1', lockDurationMs: TOO_LONG })).rejects.toMatchObject({
      code: 'ERR_OPTION_INVALID',
      message: expect.stringContaining('lockDurationMs must be an integer from 100 to 2147483647, got 3000000000'),
    });
  });

  it('postWebhook: timeoutMs 3e9 (or 0, or NaN) is refused before anything is sent', () => {
    const request = {
      url: new URL('http://127.0.0.1:1/'),
      address: { address: '127.0.0.1', family: 4 as const },
      body: Buffer.from('{}'),
      headers: {},
    };
    for (const timeoutMs of [TOO_LONG, 0, Number.NaN]) {
      expect(() => postWebhook({ ...request, timeoutMs })).toThrow(
        expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringContaining('postWebhook: timeoutMs') }),
      );
    }
  });
});
