import type { AttemptRecord } from '@jobhook/delivery';
import type { StoredAttempt } from './signing-key-id.js';
import { LRUCache } from 'lru-cache';
import {
  canStartRound,
  type DeliveryState,
  type JobCounts,
  type JobPage,
  type JobRecord,
  type JobResult,
  type JobStore,
} from './job-record.js';
import { emptyJobCounts, matchesJobQuery, MAX_SCANNED_PER_PAGE, parseJobCursor } from './job-list.js';
import { createOrgJobIndex } from './org-job-index.js';
import { resolveMemoryJobStoreOptions, type MemoryJobStoreOptions } from '../options/memory-job-store-options.js';
import { SenderError } from '../sender-error.js';

export type { MemoryJobStoreOptions } from '../options/memory-job-store-options.js';

/** `error.error_code` of a job whose result the memory job store had no room for (see `finish`). */
export const OUTPUT_TOO_LARGE = 'output_too_large';
/** A job with its delivery log, and the bytes counted for both. */
interface Entry {
  job: JobRecord;
  attempts: AttemptRecord[];
  bytes: number;
  /** What the entry is counted as in its organization's counts; absent once the store dropped it. */
  counted?: { organizationId: string; status: JobRecord['status']; delivery: keyof JobCounts['delivery'] } | undefined;
}

/** Bytes counted per job and per attempt on top of their text: object headers, numbers, map entries. */
const JOB_OVERHEAD_BYTES = 1024;
const ATTEMPT_OVERHEAD_BYTES = 512;

/** Strings are UTF-16 in memory: 2 bytes a character (a fair upper estimate for the JSON held here). */
function textBytes(...texts: ReadonlyArray<string | null | undefined>): number {
  return texts.reduce((sum, t) => sum + 2 * (t?.length ?? 0), 0);
}

function jobBytes(job: JobRecord): number {
  return (
    JOB_OVERHEAD_BYTES +
    textBytes(
      job.inputJson,
      job.outputJson,
      job.originalResponseJson,
      job.userParametersJson,
      job.webhookReceiver,
      job.simulate.outputJson,
      job.error?.message,
    )
  );
}

function attemptBytes(a: StoredAttempt): number {
  return (
    ATTEMPT_OVERHEAD_BYTES +
    textBytes(
      a.url,
      a.errorMessage,
      a.responseBody === null || a.responseBody === undefined ? '' : JSON.stringify(a.responseBody),
      a.keyId ?? '',
    )
  );
}

/** Unfinished work the store must keep: a processing job, or one whose delivery round is pending. */
const isUnsettled = (job: JobRecord): boolean => job.status === 'processing' || job.delivery === 'pending';

/**
 * Jobs and delivery logs in this process's memory: the default, lost on restart, and bounded.
 *
 * Unsettled jobs (processing, or a delivery round pending) are never evicted: the queue still works
 * on them. Settled ones sit in an LRU cache (lru-cache) and are forgotten `settledTtlMs` after they
 * settled, or earlier, least recently used first, when the jobs (all of them) exceed `maxJobs` or
 * their estimated bytes `maxBytes`. A forgotten job is unknown: its poll answers 404 as for any
 * unknown job. When unsettled jobs alone fill the limits, `create` throws `SenderError` `ERR_STORE_FULL` (503)
 * until some settle, so memory stays bounded even under a flood of slow jobs. A redeliver moves a
 * settled job back to the unsettled ones (without growing the total). A result that would make one
 * job larger than half of `maxBytes`, or the unsettled jobs larger than `maxBytes`, is not kept:
 * `finish` records the job as failed instead, `error.error_code` `output_too_large` (the message
 * gives the sizes), so the job stays known and its webhook says why. A job whose delivery log alone
 * grows past `maxBytes` is dropped like an evicted one.
 *
 * Records are copied in and out so callers never share mutable state with the store, as with Redis.
 *
 * @example
 * ```ts
 * const jobs = createMemoryJobStore({ maxJobs: 1000, settledTtlMs: 3_600_000 });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` on a wrong option.
 */
export function createMemoryJobStore(options: MemoryJobStoreOptions = {}): JobStore {
  const { maxJobs, maxBytes, settledTtlMs, now } = resolveMemoryJobStoreOptions(options);

  const unsettled = new Map<string, Entry>();
  let unsettledBytes = 0;
  // Each organization's counts, changed with each job (see countJobs).
  const counts = new Map<string, JobCounts>();
  // Settled jobs by the time they settled, oldest first: the order they expire in (one TTL for all,
  // restarted at each change, as lru-cache restarts it at each set).
  const settledAt = new Map<string, number>();

  function uncount(entry: Entry): void {
    const was = entry.counted;
    if (was === undefined) return;
    entry.counted = undefined;
    const c = counts.get(was.organizationId);
    if (c === undefined) return;
    c.jobs--;
    c.status[was.status]--;
    c.delivery[was.delivery]--;
    if (c.jobs === 0) counts.delete(was.organizationId);
  }

  function count(entry: Entry): void {
    uncount(entry);
    const { organizationId, status } = entry.job;
    const delivery = entry.job.delivery ?? 'none';
    let c = counts.get(organizationId);
    if (c === undefined) counts.set(organizationId, (c = emptyJobCounts()));
    c.jobs++;
    c.status[status]++;
    c.delivery[delivery]++;
    entry.counted = { organizationId, status, delivery };
  }

  /** Drops the settled jobs whose TTL ran out (lru-cache drops them only when they are read). */
  function expireSettled(): void {
    for (const [jobId, at] of settledAt) {
      if (now() - at <= settledTtlMs) return;
      // A read of a stale entry deletes it ('expire'): dispose uncounts it and unfiles it here.
      settled.get(jobId);
      settledAt.delete(jobId);
    }
  }

  // Peeks: a list must not make the jobs it shows the most recently used.
  const peek = (jobId: string): Entry | undefined => unsettled.get(jobId) ?? settled.peek(jobId);
  const index = createOrgJobIndex((jobId) => peek(jobId) !== undefined);
  const settled: LRUCache<string, Entry> = new LRUCache<string, Entry>({
    max: maxJobs,
    maxSize: maxBytes,
    sizeCalculation: (entry) => Math.max(1, entry.bytes),
    ttl: settledTtlMs,
    // Read the clock at every check: lru-cache otherwise caches it for 1 ms with a timer per read.
    ttlResolution: 0,
    perf: { now },
    // Evicted, expired, or refused as larger than maxSize on its own ('set': the store never
    // replaces a cached entry with another object, the other cause of 'set'): the job is gone, and
    // leaves its organization's index. ('delete' is this store moving an entry to the unsettled jobs.)
    dispose: (entry, jobId, reason) => {
      settledAt.delete(jobId);
      if (reason === 'evict' || reason === 'expire' || reason === 'set') {
        index.dropped(entry.job.organizationId);
        uncount(entry);
      }
    },
  });

  const find = (jobId: string): Entry | undefined => unsettled.get(jobId) ?? settled.get(jobId);

  /** Drops settled jobs, least recently used first, until every job fits both limits. */
  function trim(): void {
    while (settled.size > 0 && (unsettled.size + settled.size > maxJobs || unsettledBytes + settled.calculatedSize > maxBytes))
      settled.pop();
  }

  /** Files `entry` after a change: with the unsettled jobs or in the cache (its TTL starting again). */
  function place(entry: Entry): void {
    const id = entry.job.jobId;
    const wasUnsettled = unsettled.get(id) === entry;
    if (wasUnsettled) unsettledBytes -= entry.bytes;
    entry.bytes = jobBytes(entry.job) + entry.attempts.reduce((sum, a) => sum + attemptBytes(a), 0);
    // Counted as it is now; a drop below uncounts it.
    count(entry);
    if (isUnsettled(entry.job)) {
      if (!wasUnsettled) settled.delete(id);
      unsettled.set(id, entry);
      unsettledBytes += entry.bytes;
    } else {
      unsettled.delete(id);
      const wasCached = settled.peek(id, { allowStale: true }) !== undefined;
      settled.set(id, entry);
      // lru-cache refuses an entry larger than maxSize on its own (its log grew past it): the job is
      // dropped. When it was cached, dispose saw it ('set'); when it arrives from the unsettled jobs,
      // lru-cache says nothing, so it is counted here.
      if (settled.peek(id) !== undefined) {
        settledAt.delete(id);
        settledAt.set(id, now());
      } else if (!wasCached) {
        index.dropped(entry.job.organizationId);
        uncount(entry);
      }
    }
    trim();
  }

  /**
   * `result`, or a fail (`output_too_large`) when the job with it would take more than half of
   * `maxBytes` on its own, or push the unsettled jobs (which are never dropped) past `maxBytes`:
   * the job stays known with a clear error instead of being dropped (404) as soon as it settles.
   */
  function fitting(entry: Entry, result: JobResult): JobResult {
    const attempts = entry.bytes - jobBytes(entry.job);
    const bytes = jobBytes({ ...entry.job, ...result }) + attempts;
    const others = unsettledBytes - (unsettled.get(entry.job.jobId) === entry ? entry.bytes : 0);
    const staysUnsettled = isUnsettled({ ...entry.job, ...result });
    if (bytes <= maxBytes / 2 && (!staysUnsettled || others + bytes <= maxBytes)) return result;
    const message =
      bytes > maxBytes / 2
        ? `the job with its result (${bytes} bytes estimated) is larger than the job store keeps for one job (half of its ${maxBytes} bytes)`
        : // Other organizations' unfinished jobs fill it: their size is not the submitter's to see.
          `the job store has no room for the job's result (${bytes} bytes estimated) next to the unfinished jobs it holds`;
    return {
      status: 'fail',
      finishedAt: result.finishedAt,
      outputJson: null,
      originalResponseJson: null,
      error: { message, error_code: OUTPUT_TOO_LARGE },
      cost: result.cost,
    };
  }

  return {
    async create(job) {
      const existing = find(job.jobId);
      if (existing === undefined && isUnsettled(job) && (unsettled.size >= maxJobs || unsettledBytes + jobBytes(job) > maxBytes)) {
        throw new SenderError(
          'ERR_STORE_FULL',
          `the job store holds ${unsettled.size} unfinished jobs, as many as it may; retry when some have finished`,
        );
      }
      const entry = existing ?? { job, attempts: [], bytes: 0 };
      entry.job = structuredClone(job);
      if (existing === undefined) index.add(job.organizationId, job.jobId);
      place(entry);
    },
    async get(jobId) {
      const entry = find(jobId);
      return entry && structuredClone(entry.job);
    },
    async finish(jobId, result: JobResult) {
      const entry = find(jobId);
      if (entry === undefined || entry.job.status !== 'processing') return undefined;
      Object.assign(entry.job, structuredClone(fitting(entry, result)));
      place(entry);
      return structuredClone(entry.job);
    },
    async setDelivery(jobId, state: DeliveryState, round?: number) {
      const entry = find(jobId);
      if (entry === undefined) return;
      entry.job.delivery = state;
      if (round !== undefined) entry.job.deliveryRound = round;
      place(entry);
    },
    // Check and set run without an await in between: atomic in this single-threaded process.
    async startRound(jobId, round, redeliveredAt?: string) {
      const entry = find(jobId);
      if (entry === undefined || !canStartRound(entry.job, round)) return false;
      entry.job.delivery = 'pending';
      entry.job.deliveryRound = round;
      if (redeliveredAt !== undefined) entry.job.redeliveredAt = redeliveredAt;
      place(entry);
      return true;
    },
    async endRound(jobId, round, state) {
      const entry = find(jobId);
      if (entry === undefined || entry.job.delivery !== 'pending' || entry.job.deliveryRound !== round) return false;
      entry.job.delivery = state;
      place(entry);
      return true;
    },
    async appendAttempt(jobId, attempt) {
      const entry = find(jobId);
      // The log lives with its job: an attempt of a forgotten job has nowhere to go.
      if (entry === undefined) return;
      entry.attempts.push(structuredClone(attempt));
      place(entry);
    },
    async listAttempts(jobId) {
      return (find(jobId)?.attempts ?? []).map((a) => structuredClone(a));
    },
    async listJobs(organizationId, query): Promise<JobPage> {
      const before = query.cursor === undefined ? undefined : parseJobCursor(query.cursor);
      const jobs: JobRecord[] = [];
      let scanned = 0;
      let last: number | undefined;
      for (const { position, jobId } of index.newestFirst(organizationId, before)) {
        // Full page, or scanned enough: the next page starts after the last entry read.
        if (jobs.length >= query.limit || scanned >= MAX_SCANNED_PER_PAGE) return { jobs, nextCursor: String(last) };
        scanned++;
        last = position;
        const entry = peek(jobId);
        // A job from another organization cannot be filed here; checked all the same, as the API's 404 is.
        if (entry !== undefined && entry.job.organizationId === organizationId && matchesJobQuery(entry.job, query))
          jobs.push(structuredClone(entry.job));
      }
      return { jobs, nextCursor: null };
    },
    // Counters changed with each job (place, and the cache's dispose): a read of a few numbers. The
    // jobs whose TTL ran out are dropped first, oldest first, so each job is expired once (amortized
    // constant time), and the counts match what a list shows.
    async countJobs(organizationId) {
      expireSettled();
      return structuredClone(counts.get(organizationId) ?? emptyJobCounts());
    },
    async close() {},
  };
}
