/**
 * Never lose a result: jobs are submitted through examples/job-app (`POST /jobs` with the app's
 * token, the client writing the expected-jobs ledger) to the reference service (`jobhook serve`, retries shortened to
 * a few seconds), whose webhooks reach the app through a fault proxy, while:
 * - for a third of the jobs the receiver is "down" (every webhook attempt reset) for longer than the
 *   service's whole retry span, so their results can only come by poll;
 * - mid-run the app is SIGKILLed and restarted with a wrong public key: every webhook meanwhile is
 *   answered 401, which the service never retries; then SIGKILLed again and restarted right.
 * The reconciler (beside the app) polls every job past its deadline. On PostgreSQL (store, ledger
 * and job_results in one database, each row written through the job's transaction) every submitted
 * job has exactly one row; on Redis (claims and ledger in Redis, rows written outside a transaction:
 * at least once across crashes, as documented) none is lost and duplicates are counted. The report
 * says how many results came by poll.
 *
 * CHAOS_JOBS (default 24 per store), CHAOS_SEED. Needs `npx tsc -b` (the children run the builds).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type PostgresServer } from '../../packages/postgres/test/helpers/postgres-server.js';
import { freePort, startRedisServer, type RedisServer } from '../../packages/core/test/helpers/redis-server.js';
import { assertBuilt, startSenderCli, writeSigningKeys } from '../helpers/chaos-cluster.js';
import { stopAllChildren } from '../helpers/chaos-processes.js';
import { formatTable, mapConcurrent } from '../helpers/chaos-report.js';
import { envInteger } from '../helpers/env-integer.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { jobAppHeaders, startJobApp, type JobApp } from '../helpers/job-app-process.js';

const JOBS = envInteger('CHAOS_JOBS', 24);
const SEED = envInteger('CHAOS_SEED', 20_251_125);
const API_KEY = 'jh_inf_jobAppChaosFixedKey0123456789';
const APP_TOKEN = 'job-app-chaos-token-0123456789';
/** The service's retries: 3 after the first attempt, 100 ms doubling (jittered) up to 400 ms, 1 s per attempt. */
const SENDER_FLAGS = { attemptTimeoutMs: 1_000, retryBaseMs: 100, maxRetries: 3, jobDelayMs: 50 };
/** Longer than the service's whole retry span, so a job whose webhooks all failed is polled after they stopped. */
const DEADLINE_MS = 6_000;
/** How long the app answers 401 (wrong key) in the middle of the run. */
const WRONG_KEY_MS = 2_500;
/** Submissions spread over about this long, so webhooks arrive before, during and after the chaos. */
const SUBMIT_SPAN_MS = 12_000;
const SUBMIT_CONCURRENCY = 2;
/**
 * The app's outstanding-jobs limit: its default (100) is above this run's peak (every job outstanding
 * at once at worst, plus the few whose submit answer a kill swallowed); a larger CHAOS_JOBS raises it.
 */
const MAX_OUTSTANDING = JOBS * 2 > 100 ? JOBS * 2 : undefined;
const TEST_TIMEOUT_MS = 150_000 + JOBS * 1_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let tmp: string;
let postgres: PostgresServer;
let senderRedis: RedisServer;
let appRedis: RedisServer;
let keys: { privateKeyFile: string; publicKeyFile: string };
let wrongKeys: { publicKeyFile: string };
let serviceUrl: string;

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-job-app-chaos-'));
  keys = writeSigningKeys(tmp);
  wrongKeys = writeSigningKeys(mkdtempSync(join(tmp, 'wrong-')));
  [postgres, senderRedis, appRedis] = await Promise.all([startPostgresServer({ own: true }), startRedisServer(), startRedisServer()]);
  const sender = await startSenderCli({
    port: 0,
    redisUrl: senderRedis.url,
    privateKeyFile: keys.privateKeyFile,
    apiKey: API_KEY,
    ...SENDER_FLAGS,
    extraArgs: ['--max-retry-delay-ms', '400'],
  });
  serviceUrl = sender.baseUrl;
}, 60_000);

afterAll(async () => {
  await stopAllChildren();
  await Promise.all([postgres?.dispose(), senderRedis?.dispose(), appRedis?.dispose()]);
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

/** A third of the jobs, chosen from the job id (and the seed), have every webhook attempt reset. */
function isDownFor(jobId: string): boolean {
  return createHash('sha256').update(`${SEED}:${jobId}`).digest()[0]! % 3 === 0;
}

interface ScenarioResult {
  submitted: string[];
  rows: Map<string, number>;
  bySource: Record<string, number>;
  downJobs: number;
  proxy: FaultProxy['counts'];
  /** Webhook answers of the app, by status, as the proxy saw them. */
  answers: Record<string, number>;
  reconciled: Record<string, number>;
  /** Most ledger entries seen after a submission (PostgreSQL only; -1 on Redis), and the app's limit on them. */
  peakOutstanding: number;
  maxOutstanding: number;
}

async function runScenario(store: 'postgres' | 'redis'): Promise<ScenarioResult> {
  const database = `chaos_${store}`;
  const admin = postgres.pool();
  await admin.query(`CREATE DATABASE ${database}`);
  const databaseUrl = postgres.url.replace(/\/[^/]*$/, `/${database}`);
  const db = new pg.Pool({ connectionString: databaseUrl });
  const appPort = await freePort();
  const answers: Record<string, number> = {};
  const proxy = await startFaultProxy({
    onExchange: (x) => {
      const key = x.statusCode === undefined ? x.fault : String(x.statusCode);
      answers[key] = (answers[key] ?? 0) + 1;
    },
    targets: [`http://127.0.0.1:${appPort}`],
    plan: (_n, _req, body) => {
      const jobId = /"job_id"\s*:\s*"([^"]+)"/.exec(body.toString('utf8'))?.[1];
      return jobId !== undefined && isDownFor(jobId.toLowerCase()) ? 'reset' : 'forward';
    },
  });
  const reconciled: Record<string, number> = {};
  let maxOutstanding = Number.NaN;
  const start = (name: string, publicKeyFile: string): Promise<JobApp> =>
    startJobApp({
      name,
      port: appPort,
      token: APP_TOKEN,
      ...(MAX_OUTSTANDING === undefined ? {} : { maxOutstanding: MAX_OUTSTANDING }),
      databaseUrl,
      serviceUrl,
      apiKey: API_KEY,
      publicKeyFile,
      publicUrl: proxy.url,
      deadlineMs: DEADLINE_MS,
      store,
      ...(store === 'redis' ? { redisUrl: appRedis.url } : {}),
      onLog(entry) {
        if (entry['msg'] === 'listening') maxOutstanding = Number(entry['max_outstanding']);
        if (entry['msg'] === 'reconciled') reconciled[String(entry['kind'])] = (reconciled[String(entry['kind'])] ?? 0) + 1;
      },
    });
  let app = await start(`${store}-app-1`, keys.publicKeyFile);
  let up: Promise<void> = Promise.resolve();

  const submitted: string[] = [];
  let peakOutstanding = -1;
  const submitOne = async (seq: number): Promise<void> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      await up;
      const simulate = seq % 10 === 9 ? { outcome: 'fail', delay_ms: 50 } : { delay_ms: 50 };
      const res = await fetch(`http://127.0.0.1:${appPort}/jobs`, {
        method: 'POST',
        headers: jobAppHeaders(APP_TOKEN),
        body: JSON.stringify({ model: 'ocr/ocr_async/amazon', input: { file: `f-${seq}`, simulate } }),
      }).catch(() => undefined);
      if (res?.status === 202) {
        submitted.push(((await res.json()) as { job_id: string }).job_id.toLowerCase());
        if (store === 'postgres') {
          const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobhook_ledger');
          peakOutstanding = Math.max(peakOutstanding, rows[0]!.n);
        }
        return;
      }
      // A refusal (token, outstanding limit, body) is no kill: trying again would only hide it.
      if (res !== undefined && res.status >= 400 && res.status < 500) throw new Error(`job ${seq}: ${res.status} ${await res.text()}`);
      // The app was being killed: its answer was lost. A job may exist that we do not know of
      // (counted below as an extra row, if its result comes); submit this one again.
      await sleep(200);
    }
    throw new Error(`job ${seq} could not be submitted`);
  };

  const chaos = (async () => {
    // Mid-run: SIGKILL, then the wrong key (every webhook 401, never retried by the service) ...
    while (submitted.length < JOBS / 3) await sleep(50);
    let release!: () => void;
    up = new Promise((r) => (release = r));
    await app.child.kill();
    app = await start(`${store}-app-wrong-key`, wrongKeys.publicKeyFile);
    release();
    await sleep(WRONG_KEY_MS);
    // ... then SIGKILL again and back with the right key.
    up = new Promise((r) => (release = r));
    await app.child.kill();
    app = await start(`${store}-app-2`, keys.publicKeyFile);
    release();
  })();

  await mapConcurrent(
    Array.from({ length: JOBS }, (_, i) => i),
    SUBMIT_CONCURRENCY,
    async (seq) => {
      await submitOne(seq);
      await sleep(Math.floor((SUBMIT_SPAN_MS * SUBMIT_CONCURRENCY) / JOBS));
    },
  );
  await chaos;

  // Every submitted job has a row, and the ledger is empty (nothing outstanding, nothing abandoned).
  const ledgerLeft = async (): Promise<number> => {
    if (store === 'postgres')
      return Number((await db.query('SELECT count(*)::int AS n FROM jobhook_ledger WHERE job_id IS NOT NULL')).rows[0].n);
    return -1;
  };
  const countRows = async (): Promise<Map<string, number>> => {
    const { rows } = await db.query<{ job_id: string; n: number }>('SELECT job_id, count(*)::int AS n FROM job_results GROUP BY job_id');
    return new Map(rows.map((r) => [r.job_id, r.n]));
  };
  const waitUntil = Date.now() + TEST_TIMEOUT_MS - 40_000;
  let rows = await countRows();
  while (Date.now() < waitUntil && (submitted.some((id) => !rows.has(id)) || (await ledgerLeft()) > 0)) {
    await sleep(250);
    rows = await countRows();
  }
  // A little longer: a duplicate would show by now (one more reconciler round and retry span).
  await sleep(2_000);
  rows = await countRows();
  const { rows: sources } = await db.query<{ source: string; n: number }>(
    'SELECT source, count(*)::int AS n FROM job_results GROUP BY source',
  );
  const result: ScenarioResult = {
    submitted,
    rows,
    bySource: Object.fromEntries(sources.map((s) => [s.source, s.n])),
    downJobs: submitted.filter(isDownFor).length,
    proxy: { ...proxy.counts },
    answers,
    reconciled,
    peakOutstanding,
    maxOutstanding,
  };
  await app.child.stop();
  await proxy.close();
  await db.end();
  await admin.end();
  return result;
}

function report(store: string, r: ScenarioResult): void {
  const counts = [...r.submitted].map((id) => r.rows.get(id) ?? 0);
  const extra = [...r.rows.keys()].filter((id) => !r.submitted.includes(id));
  console.log(
    formatTable(`job-app chaos on ${store} (${r.submitted.length} jobs, seed ${SEED})`, [
      ['jobs submitted (answer received)', r.submitted.length],
      ['jobs whose receiver was down past the retry span', r.downJobs],
      ['handled exactly once', counts.filter((n) => n === 1).length],
      ['handled more than once (duplicates)', counts.filter((n) => n > 1).length],
      ['lost (no row)', counts.filter((n) => n === 0).length],
      ['results that came by webhook', r.bySource['webhook'] ?? 0],
      ['results that came by poll', r.bySource['poll'] ?? 0],
      ['rows of jobs whose submit answer was lost', extra.length],
      ['webhook requests reset (receiver down)', r.proxy.reset],
      ['webhook answers by status', JSON.stringify(r.answers)],
      ['reconciler outcomes', JSON.stringify(r.reconciled)],
      [
        'peak ledger entries after a submission',
        r.peakOutstanding < 0
          ? `not counted on Redis (the app's limit: ${r.maxOutstanding})`
          : `${r.peakOutstanding} (the app's limit: ${r.maxOutstanding})`,
      ],
    ]),
  );
}

describe('examples/job-app: never lose a result', () => {
  it(
    'PostgreSQL: every job handled exactly once (one row each), through down receivers, 401s and kills',
    async () => {
      const r = await runScenario('postgres');
      report('PostgreSQL', r);
      expect(r.submitted).toHaveLength(JOBS);
      for (const id of r.submitted) expect(r.rows.get(id), `rows of job ${id}`).toBe(1);
      // Rows of jobs whose submit answer the kill swallowed: at most one each, too.
      for (const n of r.rows.values()) expect(n).toBe(1);
      // The down third could only come by poll; the 401 window adds more.
      expect(r.bySource['poll'] ?? 0).toBeGreaterThanOrEqual(r.downJobs);
      expect(r.downJobs).toBeGreaterThan(0);
      // The wrong-key window did answer 401s (which the service never retries).
      expect(r.answers['401'] ?? 0).toBeGreaterThan(0);
      // The app's outstanding-jobs limit (429 past it) stays clear of what this run needs.
      expect(r.peakOutstanding).toBeGreaterThan(0);
      expect(r.peakOutstanding).toBeLessThan(r.maxOutstanding);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'Redis: none lost; duplicates counted (at least once across crashes)',
    async () => {
      const r = await runScenario('redis');
      report('Redis', r);
      expect(r.submitted).toHaveLength(JOBS);
      for (const id of r.submitted) expect(r.rows.get(id) ?? 0, `rows of job ${id}`).toBeGreaterThanOrEqual(1);
      expect(r.bySource['poll'] ?? 0).toBeGreaterThanOrEqual(r.downJobs);
    },
    TEST_TIMEOUT_MS,
  );
});
