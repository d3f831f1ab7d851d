/**
 * The conformance suite of the {@link JobLedger} contract, for a ledger of your own (and run by
 * jobhook against its memory, Redis and PostgreSQL ledgers). Like the store suite, it registers its
 * tests through the functions you pass in. The ledger must be made with the fake clock the suite
 * hands to `make`: every time a ledger compares is the caller's clock, so no test sleeps.
 *
 * @example
 * ```ts
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest';
 * import { describeLedgerConformance } from '@jobhook/core/testing';
 *
 * describeLedgerConformance('my ledger', (clock) => createMyLedger({ clock }), { describe, it, expect, beforeEach, afterEach });
 * ```
 */
import { randomUUID } from 'node:crypto';
import type { JobLedger } from '../ledger/job-ledger.js';
import { createFakeClock, rejectionCode, type ConformanceTestApi, type FakeClock } from './conformance-api.js';

/** The fake clock's start: a real epoch time, so ledgers that store timestamps take it. */
const START = Date.UTC(2025, 0, 1);

/**
 * Registers the ledger contract's tests. `make(clock)` returns a new ledger on a fresh (or shared,
 * emptied) backend made with `clock`; it is closed after each test. Keys and job ids are unique per
 * test, but `count` and `lease` see the whole ledger: give each test an empty one.
 */
export function describeLedgerConformance(
  name: string,
  make: (clock: FakeClock) => JobLedger | Promise<JobLedger>,
  api: ConformanceTestApi,
): void {
  const { describe, it, expect, beforeEach, afterEach } = api;
  describe(`${name}: JobLedger contract`, () => {
    let clock: FakeClock;
    let ledger: JobLedger;
    beforeEach(async () => {
      clock = createFakeClock(START);
      ledger = await make(clock);
    });
    afterEach(async () => {
      await ledger.close();
    });
    const key = (): string => `k-${randomUUID()}`;

    it('begin writes an entry without a job id, leased once due (not before)', async () => {
      const k = key();
      await ledger.begin(k, { dueAt: clock.now() + 1000 });
      expect(await ledger.count()).toEqual({ attached: 0, unattached: 1 });
      expect(await ledger.lease({ limit: 10, leaseMs: 5000 })).toHaveLength(0);
      clock.advance(1000);
      const [entry, ...rest] = await ledger.lease({ limit: 10, leaseMs: 5000 });
      expect(rest).toHaveLength(0);
      expect(entry?.key).toBe(k);
      expect(entry?.jobId).toBe(null);
      expect(entry?.createdAt).toBe(START);
      expect(entry?.attempts).toBe(0);
    });

    it('a second begin of a key keeps the first entry', async () => {
      const k = key();
      await ledger.begin(k, { dueAt: clock.now() + 1000 });
      await ledger.begin(k, { dueAt: clock.now() + 9000 });
      clock.advance(1000);
      expect((await ledger.lease({ limit: 10, leaseMs: 5000 })).map((e) => e.key)).toEqual([k]);
    });

    it('attach sets the job id (lower case) and the due time; settle in any case removes the entry once', async () => {
      const k = key();
      const jobId = randomUUID().toUpperCase();
      await ledger.begin(k, { dueAt: clock.now() + 1000 });
      await ledger.attach(k, jobId, { dueAt: clock.now() + 3000 });
      expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
      clock.advance(1000);
      expect(await ledger.lease({ limit: 10, leaseMs: 5000 })).toHaveLength(0);
      clock.advance(2000);
      const [entry] = await ledger.lease({ limit: 10, leaseMs: 5000 });
      expect(entry?.jobId).toBe(jobId.toLowerCase());
      expect(await ledger.settle(jobId.toLowerCase())).toBe(true);
      expect(await ledger.settle(jobId)).toBe(false);
      expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
    });

    it('attach without a due time keeps the deadline of begin', async () => {
      const k = key();
      await ledger.begin(k, { dueAt: clock.now() + 2000 });
      await ledger.attach(k, randomUUID());
      clock.advance(1999);
      expect(await ledger.lease({ limit: 10, leaseMs: 5000 })).toHaveLength(0);
      clock.advance(1);
      expect(await ledger.lease({ limit: 10, leaseMs: 5000 })).toHaveLength(1);
    });

    it('attach writes the entry when it is missing (a late answer after the entry aged out)', async () => {
      const k = key();
      const jobId = randomUUID();
      await ledger.attach(k, jobId, { dueAt: clock.now() + 100 });
      clock.advance(100);
      const [entry] = await ledger.lease({ limit: 10, leaseMs: 5000 });
      expect(entry?.key).toBe(k);
      expect(entry?.jobId).toBe(jobId);
    });

    it('settling a job the ledger does not hold changes nothing', async () => {
      const k = key();
      await ledger.begin(k, { dueAt: clock.now() });
      expect(await ledger.settle(randomUUID())).toBe(false);
      expect(await ledger.count()).toEqual({ attached: 0, unattached: 1 });
    });

    it('discard removes the entry of a submission that made no job', async () => {
      const k = key();
      await ledger.begin(k, { dueAt: clock.now() });
      expect(await ledger.discard(k)).toBe(true);
      expect(await ledger.discard(k)).toBe(false);
      expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
    });

    it('a leased entry is nobody else’s until its lease ends', async () => {
      const k = key();
      await ledger.begin(k, { dueAt: clock.now() });
      await ledger.attach(k, randomUUID());
      const [first] = await ledger.lease({ limit: 10, leaseMs: 5000 });
      expect(first?.key).toBe(k);
      clock.advance(4999);
      expect(await ledger.lease({ limit: 10, leaseMs: 5000 })).toHaveLength(0);
      clock.advance(1);
      const [again] = await ledger.lease({ limit: 10, leaseMs: 5000 });
      expect(again?.key).toBe(k);
      expect(again?.token).not.toBe(first?.token);
      // The first lease ended: its token no longer reschedules or abandons the entry.
      expect(await ledger.reschedule(k, first?.token ?? '', { dueAt: clock.now() })).toBe(false);
      expect(await ledger.abandon(k, first?.token ?? '')).toBe(false);
    });

    it('leases taken at once never share an entry', async () => {
      const keys = Array.from({ length: 20 }, key);
      for (const k of keys) {
        await ledger.begin(k, { dueAt: clock.now() });
        await ledger.attach(k, randomUUID());
      }
      const leases = await Promise.all(Array.from({ length: 5 }, () => ledger.lease({ limit: 6, leaseMs: 5000 })));
      const got = leases.flat().map((e) => e.key);
      expect(new Set(got).size).toBe(got.length);
      expect(got.length).toBe(20);
    });

    it('lease takes the oldest due first, at most limit', async () => {
      const keys = [key(), key(), key()];
      await ledger.begin(keys[2] as string, { dueAt: clock.now() + 30 });
      await ledger.begin(keys[0] as string, { dueAt: clock.now() + 10 });
      await ledger.begin(keys[1] as string, { dueAt: clock.now() + 20 });
      clock.advance(30);
      expect((await ledger.lease({ limit: 2, leaseMs: 5000 })).map((e) => e.key)).toEqual(keys.slice(0, 2));
      expect((await ledger.lease({ limit: 2, leaseMs: 5000 })).map((e) => e.key)).toEqual(keys.slice(2));
    });

    it('reschedule ends the lease: due again at dueAt, one more attempt', async () => {
      const k = key();
      await ledger.begin(k, { dueAt: clock.now() });
      const [leased] = await ledger.lease({ limit: 1, leaseMs: 60_000 });
      expect(await ledger.reschedule(k, leased?.token ?? '', { dueAt: clock.now() + 500 })).toBe(true);
      expect(await ledger.reschedule(k, leased?.token ?? '', { dueAt: clock.now() + 500 })).toBe(false);
      clock.advance(500);
      const [again] = await ledger.lease({ limit: 1, leaseMs: 60_000 });
      expect(again?.attempts).toBe(1);
    });

    it('abandon removes a leased entry; a settled entry cannot be rescheduled', async () => {
      const [a, b] = [key(), key()];
      const jobB = randomUUID();
      await ledger.begin(a, { dueAt: clock.now() });
      await ledger.begin(b, { dueAt: clock.now() });
      await ledger.attach(b, jobB);
      const leased = await ledger.lease({ limit: 2, leaseMs: 60_000 });
      const token = (k: string): string => leased.find((e) => e.key === k)?.token ?? '';
      expect(await ledger.abandon(a, token(a))).toBe(true);
      expect(await ledger.settle(jobB)).toBe(true);
      expect(await ledger.reschedule(b, token(b), { dueAt: clock.now() })).toBe(false);
      expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
    });

    it('refuses bad arguments with ERR_OPTION_INVALID', async () => {
      expect(await rejectionCode(ledger.begin('', { dueAt: clock.now() }))).toBe('ERR_OPTION_INVALID');
      expect(await rejectionCode(ledger.begin(key(), { dueAt: -1 }))).toBe('ERR_OPTION_INVALID');
      expect(await rejectionCode(ledger.attach(key(), ''))).toBe('ERR_OPTION_INVALID');
      expect(await rejectionCode(ledger.settle(''))).toBe('ERR_OPTION_INVALID');
      expect(await rejectionCode(ledger.lease({ limit: 0, leaseMs: 1000 }))).toBe('ERR_OPTION_INVALID');
      expect(await rejectionCode(ledger.lease({ limit: 1, leaseMs: 0 }))).toBe('ERR_OPTION_INVALID');
    });

    it('after close every method rejects with ERR_STORE_UNAVAILABLE', async () => {
      await ledger.close();
      expect(await rejectionCode(ledger.begin(key(), { dueAt: clock.now() }))).toBe('ERR_STORE_UNAVAILABLE');
      expect(await rejectionCode(ledger.settle(randomUUID()))).toBe('ERR_STORE_UNAVAILABLE');
      expect(await rejectionCode(ledger.lease({ limit: 1, leaseMs: 1000 }))).toBe('ERR_STORE_UNAVAILABLE');
    });
  });
}
