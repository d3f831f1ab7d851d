import { JobhookError } from '@jobhook/core';
import type { AttemptRecord } from '@jobhook/delivery';
import { checkJobId } from '@jobhook/core/internal';
import { DEFAULT_CONNECT_TIMEOUT_MS, quitRedisClient, redisCall, redisFromOption } from '@jobhook/core/internal/redis';
import {
  canStartRound,
  type DeliveryState,
  type JobCounts,
  type JobPage,
  type JobRecord,
  type JobResult,
  type JobStore,
} from './job-record.js';
import { emptyJobCounts, JOB_DELIVERIES, JOB_STATUSES, matchesJobQuery, MAX_SCANNED_PER_PAGE } from './job-list.js';
import { resolveRedisJobStoreOptions, type RedisJobStoreOptions } from '../options/redis-job-store-options.js';

export { DEFAULT_JOB_TTL_MS, type RedisJobStoreOptions } from '../options/redis-job-store-options.js';

/** A compare-and-set that keeps losing (the record keeps changing) is given up after this many tries. */
const MAX_CAS_TRIES = 20;
/** Index entries read per round trip of a job list. */
const LIST_CHUNK = 100;
/**
 * An index score is the creation time in ms times this, plus a shared counter modulo it: unique
 * across sender processes unless they create this many jobs in one millisecond, and below 2^53
 * (an exact double) until the year 2255.
 */
const SCORE_SLOTS = 1000;

/**
 * `KEYS[1]` = job key, `KEYS[2]` = the job's revision key, `ARGV[1]` = the record text as read,
 * `ARGV[2]` = the new text: writes the new text (TTL kept) only when the key still holds exactly
 * what was read, and counts the write in the revision (same TTL). Returns the new revision (≥ 1)
 * when written, 0 when the record changed meanwhile, -1 when it is gone. The record is read, checked
 * and rebuilt in JavaScript (exact JSON text members untouched, no Lua cjson re-encoding), and this
 * script makes the write conditional, so a read-check-write is atomic as a whole: of two processes
 * finishing the same `processing` job, only the first write lands; the second re-reads, sees it
 * final, gives up.
 */
const CAS_LUA = `
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
local revision = redis.call('INCR', KEYS[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return revision
`;

/** Expired index entries one creation removes at most (the rest go at the next ones). */
const PRUNE_PER_CREATE = 1000;

/**
 * The organization's counts, kept with each write of one of its jobs. `KEYS[1]` = the
 * organization's index, `KEYS[2]` = its hash of each job's counted revision, `KEYS[3..5]` = its
 * sorted sets of the jobs in each status, `KEYS[6..10]` in each delivery state (same scores as the
 * index: creation time, so a count over a score range leaves out expired jobs). `ARGV[1]` = job id,
 * `ARGV[2]` = the revision written, `ARGV[3]`/`ARGV[4]` = which KEYS hold its status and delivery
 * state. On creation, also `ARGV[5]` = its index score, `ARGV[6]` = the score below which entries
 * have expired, `ARGV[7]` = the TTL of the organization's keys: the job is indexed, up to
 * ${PRUNE_PER_CREATE} expired entries leave every set, and the keys' TTL starts again.
 *
 * The job moves to its states only when `ARGV[2]` is newer than the revision counted: the record
 * is written first (in its own hash slot), then this runs (in the organization's), so two
 * processes' tallies of the same job may arrive out of order, and the older one must not win.
 */
const TALLY_LUA = `
if ARGV[5] then
  redis.call('ZADD', KEYS[1], 'NX', ARGV[5], ARGV[1])
  local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[6], 'LIMIT', 0, ${PRUNE_PER_CREATE})
  if #expired > 0 then
    redis.call('HDEL', KEYS[2], unpack(expired))
    redis.call('ZREM', KEYS[1], unpack(expired))
    for i = 3, #KEYS do redis.call('ZREM', KEYS[i], unpack(expired)) end
  end
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[7]) end
end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
local counted = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if counted >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
for i = 3, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
redis.call('ZADD', KEYS[tonumber(ARGV[3])], score, ARGV[1])
redis.call('ZADD', KEYS[tonumber(ARGV[4])], score, ARGV[1])
return 1
`;

interface ScriptClient {
  jobhookSenderCasV2(key: string, revisionKey: string, expected: string, next: string): Promise<number>;
  jobhookSenderTallyV1(...keysThenArgs: (string | number)[]): Promise<number>;
}

/** The organization's keys the tally script takes, after the index and the revisions. */
const STATE_SETS = [...JOB_STATUSES.map((s) => `status-${s}`), ...JOB_DELIVERIES.map((d) => `delivery-${d}`)];

/**
 * The job store on Redis: one JSON string per job at `${prefix}job:{jobId}` and the delivery log as
 * a list at `${prefix}attempts:{jobId}` (the braces make the job id the Redis Cluster hash tag, so a
 * job's keys share a slot). No command or transaction spans keys of two slots (the record and its
 * organization's index are written one after the other, a list reads jobs with one GET each), so
 * the key layout and commands work on Redis Cluster as on a single node. Jobs expire `jobTtlMs` after creation, logs `attemptsTtlMs` after the
 * last attempt. Each organization's jobs are indexed in a sorted set at `${prefix}org-jobs:{orgId}`
 * scored by creation time (the list reads it newest first); entries leave it with their jobs: those
 * older than `jobTtlMs` at each creation (up to a thousand at a time), any whose job a list finds
 * gone at once, and the whole set `jobTtlMs` after the organization's last job. Beside it, in the
 * same hash slot, a sorted set per status and per delivery state holds the organization's jobs in
 * that state (same scores), moved by each write of a job, so `countJobs` is a few ZCOUNTs over
 * the unexpired score range, whatever the number of jobs. `finish`, `setDelivery`, `startRound` and `endRound` are atomic read-check-writes
 * (a Lua compare-and-set), so two sender processes cannot both finish one job, both start one
 * redelivery round, nor lose each other's update.
 *
 * @throws JobhookError `ERR_OPTION_INVALID` for a bad option; `ERR_STORE_UNAVAILABLE` when the URL's
 * Redis cannot be reached within a few seconds, and from methods when Redis fails.
 * @example
 * ```ts
 * const jobs = await createRedisJobStore({ redis: 'redis://127.0.0.1:6379/0' });
 * ```
 */
export async function createRedisJobStore(options: RedisJobStoreOptions): Promise<JobStore> {
  const { redis, prefix, jobTtlMs, attemptsTtlMs } = resolveRedisJobStoreOptions(options);
  const { client, owned } = await redisFromOption('createRedisJobStore', redis);
  client.defineCommand('jobhookSenderCasV2', { numberOfKeys: 2, lua: CAS_LUA });
  client.defineCommand('jobhookSenderTallyV1', { numberOfKeys: 2 + STATE_SETS.length, lua: TALLY_LUA });
  const scripts = client as unknown as ScriptClient;
  const jobKey = (jobId: string): string => `${prefix}job:{${jobId}}`;
  const revisionKey = (jobId: string): string => `${prefix}revision:{${jobId}}`;
  const attemptsKey = (jobId: string): string => `${prefix}attempts:{${jobId}}`;
  const orgKey = (organizationId: string): string => `${prefix}org-jobs:{${organizationId}}`;
  /** The organization's index, its revisions hash and its state sets (one hash slot: `{organizationId}`). */
  const orgKeys = (organizationId: string): string[] => [
    orgKey(organizationId),
    `${prefix}org-revisions:{${organizationId}}`,
    ...STATE_SETS.map((set) => `${prefix}org-${set}:{${organizationId}}`),
  ];
  /** Score below which an index entry's job has expired: created more than `jobTtlMs` ago. */
  const expiredBelow = (): number => (Date.now() - jobTtlMs) * SCORE_SLOTS;

  /** Moves `job` to its current states in its organization's sets, at `revision` (see TALLY_LUA). */
  function tally(job: JobRecord, revision: number, creation?: { score: number }): Promise<number> {
    const keys = orgKeys(job.organizationId);
    const args: (string | number)[] = [
      job.jobId,
      revision,
      3 + JOB_STATUSES.indexOf(job.status),
      3 + JOB_STATUSES.length + JOB_DELIVERIES.indexOf(job.delivery ?? 'none'),
    ];
    if (creation !== undefined) args.push(creation.score, expiredBelow(), jobTtlMs);
    return scripts.jobhookSenderTallyV1(...keys, ...args);
  }
  const sequenceKey = `${prefix}job-sequence`;
  let closed = false;

  const call = <T>(operation: string, send: () => Promise<T>): Promise<T> => redisCall(`redisJobStore.${operation}`, closed, send);

  /** Reads the record, lets `change` edit it (or refuse with false), writes it back if unchanged meanwhile. */
  async function update(operation: string, jobId: string, change: (job: JobRecord) => boolean): Promise<JobRecord | undefined> {
    checkJobId(`redisJobStore.${operation}`, jobId);
    return call(operation, async () => {
      for (let i = 0; i < MAX_CAS_TRIES; i++) {
        const text = await client.get(jobKey(jobId));
        if (text === null) return undefined;
        const job = JSON.parse(text) as JobRecord;
        if (!change(job)) return undefined;
        const revision = await scripts.jobhookSenderCasV2(jobKey(jobId), revisionKey(jobId), text, JSON.stringify(job));
        if (revision >= 1) {
          await tally(job, revision);
          return job;
        }
        if (revision === -1) return undefined;
      }
      throw new JobhookError(
        'ERR_STORE_UNAVAILABLE',
        `redisJobStore.${operation}: job ${jobId} kept changing, gave up after ${MAX_CAS_TRIES} tries`,
      );
    });
  }

  return {
    async create(job: JobRecord) {
      checkJobId('redisJobStore.create', job?.jobId);
      const sequence = await call('create', () => client.incr(sequenceKey));
      const nowMs = Date.now();
      // The record (with its revision) first, then the index and the counts, each in its own hash
      // slot: a MULTI over both would fail with CROSSSLOT on Redis Cluster. A list run between the
      // two writes just does not show the job yet; if the second write fails, create fails (the
      // submission is refused) and the record expires unlisted and uncounted.
      const replies = await call('create', () =>
        client
          .multi()
          .set(jobKey(job.jobId), JSON.stringify(job), 'PX', jobTtlMs)
          .incr(revisionKey(job.jobId))
          .pexpire(revisionKey(job.jobId), jobTtlMs)
          .exec(),
      );
      checkReplies('create', replies);
      const revision = Number(replies?.[1]?.[1]);
      // The index entry is added NX: a record written again keeps its place in the list.
      await call('create', () => tally(job, revision, { score: nowMs * SCORE_SLOTS + (sequence % SCORE_SLOTS) }));
    },
    async get(jobId) {
      checkJobId('redisJobStore.get', jobId);
      const text = await call('get', () => client.get(jobKey(jobId)));
      return text === null ? undefined : (JSON.parse(text) as JobRecord);
    },
    async finish(jobId, result: JobResult) {
      const { status, finishedAt, outputJson, error, originalResponseJson, cost } = result;
      return update('finish', jobId, (job) => {
        if (job.status !== 'processing') return false;
        Object.assign(job, { status, finishedAt, outputJson, error, originalResponseJson, cost });
        return true;
      });
    },
    async setDelivery(jobId, state: DeliveryState, round?: number) {
      await update('setDelivery', jobId, (job) => {
        job.delivery = state;
        if (round !== undefined) job.deliveryRound = round;
        return true;
      });
    },
    // Both through the compare-and-set loop: the condition is checked on the record as written.
    async startRound(jobId, round, redeliveredAt?: string) {
      const started = await update('startRound', jobId, (job) => {
        if (!canStartRound(job, round)) return false;
        job.delivery = 'pending';
        job.deliveryRound = round;
        if (redeliveredAt !== undefined) job.redeliveredAt = redeliveredAt;
        return true;
      });
      return started !== undefined;
    },
    async endRound(jobId, round, state) {
      const ended = await update('endRound', jobId, (job) => {
        if (job.delivery !== 'pending' || job.deliveryRound !== round) return false;
        job.delivery = state;
        return true;
      });
      return ended !== undefined;
    },
    async appendAttempt(jobId, attempt: AttemptRecord) {
      checkJobId('redisJobStore.appendAttempt', jobId);
      const key = attemptsKey(jobId);
      const replies = await call('appendAttempt', () =>
        client.multi().rpush(key, JSON.stringify(attempt)).pexpire(key, attemptsTtlMs).exec(),
      );
      checkReplies('appendAttempt', replies);
    },
    async listAttempts(jobId) {
      checkJobId('redisJobStore.listAttempts', jobId);
      const items = await call('listAttempts', () => client.lrange(attemptsKey(jobId), 0, -1));
      return items.map((text) => JSON.parse(text) as AttemptRecord);
    },
    async listJobs(organizationId, query): Promise<JobPage> {
      const index = orgKey(organizationId);
      const jobs: JobRecord[] = [];
      const gone: string[] = [];
      let max = query.cursor === undefined ? '+inf' : `(${query.cursor}`;
      let scanned = 0;
      let nextCursor: string | null = null;
      while (jobs.length < query.limit && scanned < MAX_SCANNED_PER_PAGE) {
        const want = Math.min(LIST_CHUNK, MAX_SCANNED_PER_PAGE - scanned);
        const flat = await call('listJobs', () => client.zrevrangebyscore(index, max, '-inf', 'WITHSCORES', 'LIMIT', 0, want));
        const ids = flat.filter((_, i) => i % 2 === 0);
        if (ids.length === 0) {
          nextCursor = null;
          break;
        }
        // One GET per job, sent together (ioredis writes them back to back on the connection, one
        // round trip): MGET over many jobs' keys would fail with CROSSSLOT on Redis Cluster, and so
        // would an explicit pipeline, which ioredis sends to a single Cluster node.
        const texts = await call('listJobs', () => Promise.all(ids.map((id) => client.get(jobKey(id)))));
        let read = 0;
        for (; read < ids.length && jobs.length < query.limit; read++) {
          const text = texts[read];
          if (text === null || text === undefined) {
            gone.push(ids[read] as string);
            continue;
          }
          const job = JSON.parse(text) as JobRecord;
          if (job.organizationId === organizationId && matchesJobQuery(job, query)) jobs.push(job);
        }
        scanned += read;
        nextCursor = flat[2 * read - 1] as string;
        max = `(${nextCursor}`;
        // The index ended inside this chunk, and every entry of it was read: no older job.
        if (ids.length < want && read === ids.length) nextCursor = null;
        if (nextCursor === null) break;
      }
      // Expired jobs leave the index (and the counts) as soon as a list meets them.
      if (gone.length > 0) {
        const [indexKey, revisions, ...sets] = orgKeys(organizationId);
        let forget = client
          .multi()
          .zrem(indexKey as string, ...gone)
          .hdel(revisions as string, ...gone);
        for (const set of sets) forget = forget.zrem(set, ...gone);
        checkReplies('listJobs', await call('listJobs', () => forget.exec()));
      }
      return { jobs, nextCursor };
    },
    // One ZCOUNT per state set, O(log n) each, in one round trip: the sets are kept with each write
    // (TALLY_LUA), and the score range leaves out jobs past their TTL whether or not they were pruned yet.
    async countJobs(organizationId) {
      const [, , ...sets] = orgKeys(organizationId);
      const min = expiredBelow();
      let read = client.multi();
      for (const set of sets) read = read.zcount(set, min, '+inf');
      const replies = await call('countJobs', () => read.exec());
      checkReplies('countJobs', replies);
      const numbers = (replies ?? []).map(([, n]) => Number(n));
      const counts: JobCounts = emptyJobCounts();
      for (const [i, status] of JOB_STATUSES.entries()) counts.status[status] = numbers[i] ?? 0;
      for (const [i, delivery] of JOB_DELIVERIES.entries()) counts.delivery[delivery] = numbers[JOB_STATUSES.length + i] ?? 0;
      counts.jobs = JOB_STATUSES.reduce((sum, status) => sum + counts.status[status], 0);
      return counts;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (owned) await quitRedisClient(client, DEFAULT_CONNECT_TIMEOUT_MS);
    },
  };
}

/** Throws the first failure of a MULTI's replies (or its abort). */
function checkReplies(operation: string, replies: [Error | null, unknown][] | null): void {
  const failure = replies?.find(([err]) => err !== null)?.[0];
  if (failure != null || replies === null) {
    throw new JobhookError(
      'ERR_STORE_UNAVAILABLE',
      `redisJobStore.${operation}: Redis failed: ${failure?.message ?? 'transaction aborted'}`,
      { cause: failure },
    );
  }
}
