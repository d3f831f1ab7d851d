import { randomUUID } from 'node:crypto';
import { JobhookError } from '../errors.js';
import type { Clock } from '../store/idempotency-store.js';
import type { JobLedger, LeasedEntry, LedgerCounts, LedgerEntry } from './job-ledger.js';
import { ledgerArgs, resolveMemoryLedgerOptions } from './ledger-option-checks.js';

/** Options of {@link createMemoryLedger}. */
export interface MemoryLedgerOptions {
  /** Where time comes from: `now()` in ms since the epoch. Default `Date` (`Date.now()`). */
  clock?: Clock;
}

interface MemoryEntry {
  key: string;
  jobId: string | null;
  createdAt: number;
  dueAt: number;
  attempts: number;
  token: string | null;
}

/**
 * An expected-jobs ledger in this process's memory: for one instance, and for tests. **Lost on
 * restart**: after a crash nothing knows which jobs were outstanding, so a result whose webhooks all
 * failed meanwhile is never fetched. Use `createRedisLedger` (`@jobhook/core/redis`) or
 * `createPostgresLedger` (`@jobhook/postgres`) where that matters.
 *
 * `lease` scans every entry (a few ms per 100,000): fine for the jobs one process has outstanding.
 *
 * @example
 * ```ts
 * const ledger = createMemoryLedger();
 * const client = createClient({ baseUrl, apiKey, ledger });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when an option is wrong.
 */
export function createMemoryLedger(options: MemoryLedgerOptions = {}): JobLedger {
  const { now } = resolveMemoryLedgerOptions(options);
  const args = ledgerArgs('memoryLedger');
  const byKey = new Map<string, MemoryEntry>();
  const keyByJob = new Map<string, string>();
  let closed = false;

  const checkOpen = (method: string): void => {
    if (closed) throw new JobhookError('ERR_STORE_UNAVAILABLE', `memoryLedger.${method}: the ledger is closed`);
  };
  const remove = (entry: MemoryEntry): void => {
    byKey.delete(entry.key);
    if (entry.jobId !== null && keyByJob.get(entry.jobId) === entry.key) keyByJob.delete(entry.jobId);
  };
  const view = (entry: MemoryEntry): LedgerEntry => ({
    key: entry.key,
    jobId: entry.jobId,
    createdAt: entry.createdAt,
    dueAt: entry.dueAt,
    attempts: entry.attempts,
  });

  return Object.freeze({
    async begin(key: string, beginOptions: { dueAt: number }): Promise<void> {
      checkOpen('begin');
      const dueAt = args.begin(key, beginOptions);
      if (byKey.has(key)) return;
      byKey.set(key, { key, jobId: null, createdAt: now(), dueAt, attempts: 0, token: null });
    },

    async attach(key: string, jobId: string, attachOptions: { dueAt?: number } = {}): Promise<void> {
      checkOpen('attach');
      const dueAt = args.attach(key, jobId, attachOptions);
      const id = jobId.toLowerCase();
      let entry = byKey.get(key);
      if (entry === undefined) {
        const at = now();
        entry = { key, jobId: null, createdAt: at, dueAt: dueAt ?? at, attempts: 0, token: null };
        byKey.set(key, entry);
      }
      if (entry.jobId !== null && entry.jobId !== id) keyByJob.delete(entry.jobId);
      entry.jobId = id;
      if (dueAt !== undefined) entry.dueAt = dueAt;
      keyByJob.set(id, key);
    },

    async discard(key: string): Promise<boolean> {
      checkOpen('discard');
      args.discard(key);
      const entry = byKey.get(key);
      if (entry === undefined) return false;
      remove(entry);
      return true;
    },

    async settle(jobId: string): Promise<boolean> {
      checkOpen('settle');
      args.settle(jobId);
      const key = keyByJob.get(jobId.toLowerCase());
      const entry = key === undefined ? undefined : byKey.get(key);
      if (entry === undefined) return false;
      remove(entry);
      return true;
    },

    async lease(leaseOptions: { limit: number; leaseMs: number }): Promise<LeasedEntry[]> {
      checkOpen('lease');
      const { limit, leaseMs } = args.lease(leaseOptions);
      const at = now();
      const due = [...byKey.values()].filter((e) => e.dueAt <= at).sort((a, b) => a.dueAt - b.dueAt);
      return due.slice(0, limit).map((entry) => {
        entry.token = randomUUID();
        entry.dueAt = at + leaseMs;
        return { ...view(entry), token: entry.token };
      });
    },

    async reschedule(key: string, token: string, rescheduleOptions: { dueAt: number }): Promise<boolean> {
      checkOpen('reschedule');
      const dueAt = args.reschedule(key, token, rescheduleOptions);
      const entry = byKey.get(key);
      if (entry === undefined || entry.token !== token) return false;
      entry.token = null;
      entry.dueAt = dueAt;
      entry.attempts++;
      return true;
    },

    async abandon(key: string, token: string): Promise<boolean> {
      checkOpen('abandon');
      args.abandon(key, token);
      const entry = byKey.get(key);
      if (entry === undefined || entry.token !== token) return false;
      remove(entry);
      return true;
    },

    async count(): Promise<LedgerCounts> {
      checkOpen('count');
      const attached = keyByJob.size;
      return { attached, unattached: byKey.size - attached };
    },

    async close(): Promise<void> {
      closed = true;
    },
  });
}
