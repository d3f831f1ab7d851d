import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, isJobLedger } from '@jobhook/core/ledger';
import { createFakeClock, describeLedgerConformance, rejectionCode } from '@jobhook/core/testing';

// Through the published subpaths, as a user checks a ledger of their own.
describeLedgerConformance('memory ledger', (clock) => createMemoryLedger({ clock }), { describe, it, expect, beforeEach, afterEach });

describe('createMemoryLedger', () => {
  it('is a JobLedger', () => {
    expect(isJobLedger(createMemoryLedger())).toBe(true);
    expect(isJobLedger({ begin() {} })).toBe(false);
  });

  it('takes Date itself as its clock (a function with now()), as the README says it defaults to', async () => {
    const ledger = createMemoryLedger({ clock: Date });
    await ledger.begin(`k-${randomUUID()}`, { dueAt: Date.now() });
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 1 });
  });

  it('refuses a clock without now()', () => {
    expect(() => createMemoryLedger({ clock: {} as never })).toThrow(
      /^createMemoryLedger: clock must have a now method \(returning ms since the epoch\), got an object$/,
    );
  });

  it('uses Date.now() by default: an entry due now is leased at once', async () => {
    const ledger = createMemoryLedger();
    const before = Date.now();
    await ledger.begin('k', { dueAt: before });
    const [entry] = await ledger.lease({ limit: 1, leaseMs: 1000 });
    expect(entry?.createdAt).toBeGreaterThanOrEqual(before);
  });

  it('forgets everything when it is made anew (documented: lost on restart)', async () => {
    const clock = createFakeClock(1000);
    const first = createMemoryLedger({ clock });
    await first.begin('k', { dueAt: 1000 });
    await first.attach('k', randomUUID());
    const second = createMemoryLedger({ clock });
    expect(await second.count()).toEqual({ attached: 0, unattached: 0 });
    expect(await rejectionCode(second.begin('', { dueAt: 0 }))).toBe('ERR_OPTION_INVALID');
  });
});
