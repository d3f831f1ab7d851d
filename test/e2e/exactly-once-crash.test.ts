// Exactly-once effects across crashes: the Fastify example receiver (examples/fastify-receiver, a child
// process) inserts one row per job into job_results, while it is SIGKILLed several times inside
// handlers, between the insert and the commit of the job's done mark, and restarted on the same port.
// The sender's retries bring every job back.
//
// - Postgres store: the insert goes through ctx.db, the job's transaction; the kill rolls it back, the
//   retry runs the job again. Every job ends with exactly one row.
// - Redis store, the same insert outside any transaction (JOBHOOK_STORE=redis): the row is committed at
//   once, the claim stays held for the lease (20 s), then a retry runs the job again. Every job a
//   kill landed in ends with two rows or more (more when a later kill lands in its re-run): the test
//   tells the two apart on every run.
//
// Where each kill landed is proved from data, not from timing: the receiver logs "job handled" right
// after its insert (outside the job's transaction: the marker survives the kill) and then waits
// HANDLER_DELAY_MS inside the handler; the test kills on such a line. A job whose done mark was
// stored is never run again (every later delivery is a duplicate), so a killed job whose handler
// logged again in a later instance had no done mark when the kill landed: the kill fell between its
// insert and its commit. The test requires that of every killed job, then counts its rows: one with
// PostgreSQL, two or more with Redis. The sender's retry budget (MAX_RETRIES retries, at most
// MAX_RETRY_DELAY_MS apart: Retry-After is capped to it) outlasts the Redis lease.
//
// Sized by the chaos settings: CHAOS_JOBS / 5 jobs (default 60) and one kill per 40 jobs (at least 3).
// Each run has its own schema (search_path in the URL), so DATABASE_URL's tables are left alone.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSender, type Sender } from '@jobhook/sender';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort, startRedisServer, type RedisServer } from '../../packages/core/test/helpers/redis-server.js';
import { startPostgresServer, type PostgresServer } from '../../packages/postgres/test/helpers/postgres-server.js';
import { assertBuilt, REPO_ROOT, writeSigningKeys } from '../helpers/chaos-cluster.js';
import { spawnNode, stopAllChildren, type ManagedChild } from '../helpers/chaos-processes.js';
import { formatTable, mapConcurrent } from '../helpers/chaos-report.js';
import { createSenderApi, type SenderApi } from '../helpers/e2e-sender-api.js';
import { envInteger } from '../helpers/env-integer.js';

const JOBS = Math.ceil(envInteger('CHAOS_JOBS', 300) / 5);
const KILLS = Math.max(3, Math.ceil(JOBS / 40));
/** The window between the insert (and its log line) and the commit. */
const HANDLER_DELAY_MS = 1500;
/** The example's Redis store keeps its default lease: a killed claim blocks its job this long. */
const REDIS_LEASE_MS = 20_000;
const MAX_RETRIES = 60;
const MAX_RETRY_DELAY_MS = 1000;
const RECEIVER = join(REPO_ROOT, 'examples/fastify-receiver/server.mjs');
const TEST_TIMEOUT_MS = 120_000 + JOBS * 1500;

let tmp: string;
let publicKeyFile: string;
let postgres: PostgresServer;
let redis: RedisServer;
let sender: Sender;
let api: SenderApi;
const schemas: string[] = [];

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-exactly-once-'));
  const keys = writeSigningKeys(tmp);
  publicKeyFile = keys.publicKeyFile;
  [postgres, redis] = await Promise.all([startPostgresServer(), startRedisServer({ own: true })]);
  sender = await createSender({
    privateKey: readFileSync(keys.privateKeyFile, 'utf8'),
    allowInsecureReceivers: true,
    receiverAllowlist: ['127.0.0.0/8'],
    attemptTimeoutMs: 10_000,
    retryBaseMs: 100,
    maxRetries: MAX_RETRIES,
    maxRetryDelayMs: MAX_RETRY_DELAY_MS,
    jobDelayMs: 10,
  });
  api = createSenderApi(await sender.listen({ port: 0 }), sender.devKeys!.inference);
}, 60_000);

afterAll(async () => {
  await sender?.close();
  await stopAllChildren();
  if (postgres !== undefined) {
    const pool = postgres.pool();
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await postgres.dispose();
  }
  await redis?.dispose();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
}, 60_000);

/** A fresh schema, and the database URL whose search_path is it. */
async function freshSchema(label: string): Promise<{ schema: string; url: string }> {
  const schema = `crash_${label}_${randomUUID().replaceAll('-', '').slice(0, 8)}`;
  await postgres.pool().query(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  const url = new URL(postgres.url);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { schema, url: url.toString() };
}

/** One `job handled` line (a handler run that had inserted) and the receiver instance that logged it. */
interface Handled {
  jobId: string;
  instance: number;
}

/** A kill: the job whose line triggered it, and the instance killed. */
interface Kill {
  jobId: string;
  instance: number;
}

interface Run {
  /** Rows in job_results per job. */
  rows: Map<string, number>;
  jobIds: string[];
  /** Each kill: the job whose handler had just logged its insert, and the instance killed. */
  kills: Kill[];
  /** Every `job handled` line, in order. */
  handled: Handled[];
  undelivered: string[];
  seconds: number;
}

async function crashRun(store: 'postgres' | 'redis'): Promise<Run> {
  const started = performance.now();
  const { schema, url } = await freshSchema(store);
  const port = await freePort();
  const handled: Handled[] = [];
  let instance = 0;
  let onLine: ((line: Handled) => void) | undefined;
  const start = async (): Promise<ManagedChild> => {
    const me = ++instance;
    const { child } = await spawnNode({
      name: `fastify receiver #${me} (${store})`,
      args: [RECEIVER],
      cwd: REPO_ROOT,
      env: {
        PORT: String(port),
        HOST: '127.0.0.1',
        JOBHOOK_PUBLIC_KEY: publicKeyFile,
        DATABASE_URL: url,
        JOBHOOK_STORE: store,
        REDIS_URL: redis.url,
        HANDLER_DELAY_MS: String(HANDLER_DELAY_MS),
        LOG_LEVEL: 'warn',
      },
      ready: /"msg":"listening"/,
      onLine(line) {
        if (!line.includes('"job handled"')) return;
        const entry = { jobId: (JSON.parse(line) as { job_id: string }).job_id, instance: me };
        handled.push(entry);
        onLine?.(entry);
      },
    });
    return child;
  };
  let receiver = await start();

  const jobIds = await mapConcurrent(
    Array.from({ length: JOBS }, (_, i) => i),
    10,
    (i) =>
      api.submit(
        JSON.stringify({
          model: 'ocr/ocr_async/simulated',
          input: { file: `https://files.example/crash-${i}.pdf` },
          webhook_receiver: `http://127.0.0.1:${port}/webhooks/jobs`,
        }),
      ),
  );

  const kills: Kill[] = [];
  for (let k = 1; k <= KILLS; k++) {
    const threshold = Math.floor((k * JOBS) / (KILLS + 1));
    // The next line of the running instance once `threshold` jobs were seen: its handler has inserted
    // and now waits HANDLER_DELAY_MS before returning.
    const trigger = await new Promise<Handled>((resolve) => {
      const current = instance;
      onLine = (line) => {
        // A job's first run only: in the Redis run a re-run job must not be killed a second time.
        const firstRun = handled.filter((h) => h.jobId === line.jobId).length === 1;
        if (line.instance === current && firstRun && new Set(handled.map((h) => h.jobId)).size >= threshold) {
          onLine = undefined;
          resolve(line);
        }
      };
    });
    await receiver.kill();
    kills.push({ jobId: trigger.jobId, instance: trigger.instance });
    receiver = await start();
  }

  const finals = await mapConcurrent(jobIds, 10, (jobId) => api.waitForFinalDelivery(jobId, TEST_TIMEOUT_MS));
  await receiver.stop();
  const { rows } = await postgres
    .pool()
    .query<{ job_id: string; n: number }>(`SELECT job_id, count(*)::int AS n FROM ${schema}.job_results GROUP BY job_id`);
  return {
    rows: new Map(rows.map((r) => [r.job_id, r.n])),
    jobIds,
    kills,
    handled,
    undelivered: finals.filter((d) => d.delivery !== 'delivered').map((d) => d.job_id),
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * The killed jobs whose handler never ran again after the kill: their done mark was stored before
 * it landed (a done job is never run again), so that kill missed the insert-to-commit window.
 */
function killsAfterCommit(run: Run): string[] {
  return run.kills.filter((k) => !run.handled.some((h) => h.jobId === k.jobId && h.instance > k.instance)).map((k) => k.jobId);
}

/** Handler runs (insert lines) per killed job. */
const runsOfKilled = (run: Run): number[] => run.kills.map((k) => run.handled.filter((h) => h.jobId === k.jobId).length);

function report(store: string, run: Run): void {
  const counts = run.jobIds.map((id) => run.rows.get(id) ?? 0);
  console.log(
    formatTable(`exactly-once crash run, ${store} store: ${JOBS} jobs, ${KILLS} SIGKILLs inside handlers`, [
      ['jobs with 0 rows', counts.filter((n) => n === 0).length],
      ['jobs with exactly 1 row', counts.filter((n) => n === 1).length],
      ['jobs with 2+ rows', counts.filter((n) => n >= 2).length],
      ['rows in job_results', counts.reduce((a, b) => a + b, 0)],
      ['kills after the commit (no re-run)', killsAfterCommit(run).length],
      ['handler runs of the killed jobs', runsOfKilled(run).join(' ')],
      ['rows of the killed jobs', run.kills.map((k) => run.rows.get(k.jobId) ?? 0).join(' ')],
      ['not delivered', run.undelivered.length],
      ['wall', `${run.seconds.toFixed(1)} s`],
    ]),
  );
}

describe('SIGKILL between the handler write and the done mark', () => {
  test(
    'Postgres store, write through ctx.db: every job has exactly one row in job_results',
    async () => {
      const run = await crashRun('postgres');
      report('postgres', run);
      // Every kill landed after its job's insert and before its commit: the job ran again.
      expect(killsAfterCommit(run)).toEqual([]);
      expect(run.undelivered).toEqual([]);
      expect(run.jobIds.filter((id) => run.rows.get(id) !== 1)).toEqual([]);
      expect([...run.rows.keys()].filter((id) => !run.jobIds.includes(id))).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'Redis store, write outside the transaction: every job a kill landed in has its row twice or more',
    async () => {
      expect(MAX_RETRIES * (MAX_RETRY_DELAY_MS / 2)).toBeGreaterThan(REDIS_LEASE_MS); // the budget outlasts the lease
      const run = await crashRun('redis');
      report('redis', run);
      expect(killsAfterCommit(run)).toEqual([]);
      expect(run.undelivered).toEqual([]);
      expect(run.kills.filter((k) => (run.rows.get(k.jobId) ?? 0) < 2)).toEqual([]);
      expect(run.jobIds.filter((id) => (run.rows.get(id) ?? 0) < 1)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
