import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JobhookError } from '@jobhook/core';
import { createRetryPolicy } from '../src/retry-policy.js';
import { parseRetryAfter } from '@jobhook/core/internal';

describe('createRetryPolicy', () => {
  it('defaults to the spec: 3 retries (4 attempts), then no delay', () => {
    const policy = createRetryPolicy({ random: () => 0.5 });
    expect(policy.maxAttempts).toBe(4);
    expect([1, 2, 3, 4, 5].map((a) => policy.nextDelayMs(a, null))).toEqual([750, 1500, 3000, null, null]);
  });

  it('grows exponentially: each nominal step doubles, the delay stays in [step/2, step], up to the cap', () => {
    for (const r of [0, 0.25, 0.999999]) {
      const policy = createRetryPolicy({ maxRetries: 12, baseMs: 100, capMs: 30_000, random: () => r });
      for (let attempt = 1; attempt < 12; attempt++) {
        const step = Math.min(30_000, 100 * 2 ** (attempt - 1));
        const delay = policy.nextDelayMs(attempt, null) as number;
        expect(delay).toBeGreaterThanOrEqual(Math.floor(step / 2));
        expect(delay).toBeLessThanOrEqual(step);
        if (step * 2 <= 30_000) expect(policy.nextDelayMs(attempt + 1, null)).toBeGreaterThanOrEqual(2 * delay - 1);
      }
    }
  });

  it('honours Retry-After when longer than the backoff, capped at capMs', () => {
    const policy = createRetryPolicy({ baseMs: 1000, capMs: 30_000, random: () => 0 });
    expect(policy.nextDelayMs(1, 5000)).toBe(5000);
    expect(policy.nextDelayMs(1, 100)).toBe(500); // shorter than the backoff: the backoff wins
    expect(policy.nextDelayMs(2, 3_600_000)).toBe(30_000); // an hour asked, the cap given
    expect(policy.nextDelayMs(3, 0)).toBe(2000);
  });

  it('property: no delay is ever above the cap or below zero; null exactly when the budget is spent', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.option(fc.double({ min: -1e12, max: 1e12, noNaN: true })),
        (maxRetries, baseMs, extraCapMs, attempt, r, retryAfterMs) => {
          const capMs = baseMs + extraCapMs;
          const policy = createRetryPolicy({ maxRetries, baseMs, capMs, random: () => r });
          const delay = policy.nextDelayMs(attempt, retryAfterMs);
          if (attempt >= maxRetries + 1) return delay === null;
          if (delay === null || !Number.isInteger(delay) || delay < 0 || delay > capMs) return false;
          // Retry-After is honoured as far as the cap allows.
          if (retryAfterMs !== null && retryAfterMs > 0 && delay < Math.floor(Math.min(retryAfterMs, capMs))) return false;
          return true;
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses wrong options at construction', () => {
    for (const bad of [
      { maxRetries: -1 },
      { maxRetries: 1.5 },
      { baseMs: Number.NaN },
      { baseMs: 100, capMs: 50 },
      { random: 3 as unknown as () => number },
    ]) {
      expect(() => createRetryPolicy(bad)).toThrow(JobhookError);
    }
    expect(() => createRetryPolicy().nextDelayMs(0, null)).toThrow(
      expect.objectContaining({
        code: 'ERR_OPTION_INVALID',
        message: 'retryPolicy.nextDelayMs: attempt must be a positive integer, got 0',
      }),
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-05-01T10:00:00Z');
  it.each([
    ['1', 1000],
    [' 120 ', 120_000],
    ['0', 0],
    ['Wed, 01 May 2024 10:00:30 GMT', 30_000],
    ['Wed, 01 May 2024 09:00:00 GMT', 0],
    [undefined, null],
    ['', null],
    ['-5', null],
    ['1.5', null],
    ['soon', null],
    ['2024-05-01', null],
    ['2024', 2_024_000],
  ] as const)('%j → %j', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});
