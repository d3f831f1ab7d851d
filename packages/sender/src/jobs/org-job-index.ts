/** Dead entries an organization's list may hold before it is compacted (and at least half of it). */
const COMPACT_MIN_DEAD = 32;

interface OrgList {
  /** Index positions, ascending (creation order). */
  positions: number[];
  jobIds: string[];
  /** Entries whose job the store dropped since the last compaction (an estimate: may count twice). */
  dead: number;
}

/**
 * The memory job store's per-organization index: each organization's job ids in creation order,
 * with a position per job that a list cursor names. Dropped jobs are counted and skipped, and an
 * organization's list is compacted once at least half of it is dead, so the index stays within a
 * constant factor of the jobs the store holds (each entry is visited once per compaction: amortized
 * constant time a drop).
 * @internal
 */
export interface OrgJobIndex {
  /** Files a new job at the next position. */
  add(organizationId: string, jobId: string): void;
  /** Notes that the store dropped one of the organization's jobs. */
  dropped(organizationId: string): void;
  /** Job ids from newest to oldest, starting before position `before` (all when undefined), with their positions. */
  newestFirst(organizationId: string, before: number | undefined): Iterable<{ position: number; jobId: string }>;
}

/**
 * Creates the index; `holds(jobId)` tells whether the store still holds a job (without touching its
 * recency), for compaction.
 * @internal
 */
export function createOrgJobIndex(holds: (jobId: string) => boolean): OrgJobIndex {
  const orgs = new Map<string, OrgList>();
  let next = 0;

  function compact(organizationId: string): void {
    const list = orgs.get(organizationId);
    if (list === undefined || list.dead < COMPACT_MIN_DEAD || list.dead * 2 < list.jobIds.length) return;
    const positions: number[] = [];
    const jobIds: string[] = [];
    list.jobIds.forEach((jobId, i) => {
      if (!holds(jobId)) return;
      positions.push(list.positions[i] as number);
      jobIds.push(jobId);
    });
    if (jobIds.length === 0) orgs.delete(organizationId);
    else Object.assign(list, { positions, jobIds, dead: 0 });
  }

  return {
    add(organizationId, jobId) {
      let list = orgs.get(organizationId);
      if (list === undefined) orgs.set(organizationId, (list = { positions: [], jobIds: [], dead: 0 }));
      list.positions.push(next++);
      list.jobIds.push(jobId);
    },
    dropped(organizationId) {
      const list = orgs.get(organizationId);
      if (list === undefined) return;
      list.dead++;
      // Not inside the cache's dispose callback, which runs while the cache is mid-change.
      queueMicrotask(() => compact(organizationId));
    },
    *newestFirst(organizationId, before) {
      const list = orgs.get(organizationId);
      if (list === undefined) return;
      // Binary search: the first entry at or after `before`; the page starts just below it.
      let low = 0;
      let high = list.positions.length;
      if (before !== undefined) {
        while (low < high) {
          const mid = (low + high) >>> 1;
          if ((list.positions[mid] as number) < before) low = mid + 1;
          else high = mid;
        }
      }
      // A compaction during the walk replaces the arrays: the walk keeps the ones it started on.
      const { positions, jobIds } = list;
      for (let i = high - 1; i >= 0; i--) yield { position: positions[i] as number, jobId: jobIds[i] as string };
    },
  };
}
