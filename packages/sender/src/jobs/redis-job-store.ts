import { JobhookError } from '@jobhook/core';
import type { Cluster, Redis } from 'ioredis';
import type { AttemptRecord } from '@jobhook/delivery';
import { checkJobId, quitRedis, redisCall, redisFromOption } from '@jobhook/delivery/internal';
import { canStartRound, type DeliveryState, type JobPage, type JobRecord, type JobResult, type JobStore } from './job-record.js';
import { matchesJobQuery, MAX_SCANNED_PER_PAGE } from './job-list.js';

/** Options of {@link createRedisJobStore}. */
export interface RedisJobStoreOptions {
  /**
   * An ioredis client (stays yours: never closed by the store), a Redis Cluster client included, or
   * a `redis://` / `rediss://` URL (the store opens its own client, checks it answers, and closes it
   * in `close()`).
   */
  redis: string | Redis | Cluster;
  /** Prefix of every key; must not contain `{` or `}`. Default `'jobhook:sender:'`. */
  prefix?: string;
  /** How long a job record lives after `create`, in ms. Default 7 days. */
  jobTtlMs?: number;
  /** How long a job's delivery log lives after its last appended attempt, in ms. Default: `jobTtlMs`. */
  attemptsTtlMs?: number;
}

const WHERE = 'createRedisJobStore';
/** Default of {@link RedisJobStoreOptions.jobTtlMs}: 7 days. */
export const DEFAULT_JOB_TTL_MS = 7 * 24 * 3600 * 1000;
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
 * `KEYS[1]` = job key, `ARGV[1]` = the record text as read, `ARGV[2]` = the new text: writes the new
 * text (TTL kept) only when the key still holds exactly what was read. Returns 1 when written, 0 when
 * the record changed meanwhile, -1 when it is gone. The record is read, checked and rebuilt in
 * JavaScript (exact JSON text members untouched, no Lua cjson re-encoding), and this script makes
 * the write conditional, so a read-check-write is atomic as a whole: of two processes finishing the
 * same `processing` job, only the first write lands; the second re-reads, sees it final, gives up.
 */
const CAS_LUA = `
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
`;

interface CasClient {
  jobhookSenderCasV1(key: string, expected: string, next: string): Promise<number>;
}

/**
 * The job store on Redis: one JSON string per job at `${prefix}job:{jobId}` and the delivery log as
 * a list at `${prefix}attempts:{jobId}` (the braces make the job id the Redis Cluster hash tag, so a
 * job's keys share a slot). No command or transaction spans keys of two slots (the record and its
 * organization's index are written one after the other, a list reads jobs with one GET each), so
 * the key layout and commands work on Redis Cluster as on a single node. Jobs expire `jobTtlMs` after creation, logs `attemptsTtlMs` after the
 * last attempt. Each organization's jobs are indexed in a sorted set at `${prefix}org-jobs:{orgId}`
 * scored by creation time (the list reads it newest first); entries leave it with their jobs: those
 * older than `jobTtlMs` at each creation, any whose job a list finds gone at once, and the whole set
 * `jobTtlMs` after the organization's last job. `finish`, `setDelivery`, `startRound` and `endRound` are atomic read-check-writes
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
  if (typeof options !== 'object' || options === null) throw invalid('options are required');
  const prefix = options.prefix ?? 'jobhook:sender:';
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) throw invalid(`prefix must be a string without { or }, got ${String(prefix)}`);
  const jobTtlMs = checkTtl('jobTtlMs', options.jobTtlMs ?? DEFAULT_JOB_TTL_MS);
  const attemptsTtlMs = checkTtl('attemptsTtlMs', options.attemptsTtlMs ?? jobTtlMs);
  const { client, owned } = await redisFromOption(WHERE, options.redis);
  client.defineCommand('jobhookSenderCasV1', { numberOfKeys: 1, lua: CAS_LUA });
  const cas = client as unknown as CasClient;
  const jobKey = (jobId: string): string => `${prefix}job:{${jobId}}`;
  const attemptsKey = (jobId: string): string => `${prefix}attempts:{${jobId}}`;
  const orgKey = (organizationId: string): string => `${prefix}org-jobs:{${organizationId}}`;
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
        const written = await cas.jobhookSenderCasV1(jobKey(jobId), text, JSON.stringify(job));
        if (written === 1) return job;
        if (written === -1) return undefined;
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
      const index = orgKey(job.organizationId);
      const sequence = await call('create', () => client.incr(sequenceKey));
      const nowMs = Date.now();
      // The record first, then the index, each on its own: a MULTI over both keys would fail with
      // CROSSSLOT on Redis Cluster (they hash to different slots). A list run between the two
      // writes just does not show the job yet; if the index write fails, create fails (the
      // submission is refused) and the record expires unlisted.
      await call('create', () => client.set(jobKey(job.jobId), JSON.stringify(job), 'PX', jobTtlMs));
      const replies = await call('create', () =>
        client
          .multi()
          // NX: a record written again keeps its place in the list.
          .zadd(index, 'NX', nowMs * SCORE_SLOTS + (sequence % SCORE_SLOTS), job.jobId)
          .zremrangebyscore(index, '-inf', `(${(nowMs - jobTtlMs) * SCORE_SLOTS}`)
          .pexpire(index, jobTtlMs)
          .exec(),
      );
      checkReplies('create', replies);
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
      // Expired jobs leave the index as soon as a list meets them.
      if (gone.length > 0) await call('listJobs', () => client.zrem(index, ...gone));
      return { jobs, nextCursor };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (owned) await quitRedis(client);
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

function invalid(message: string): JobhookError {
  return new JobhookError('ERR_OPTION_INVALID', `${WHERE}: ${message}`);
}

function checkTtl(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw invalid(`${name} must be a positive whole number of milliseconds, got ${String(value)}`);
  return value;
}
