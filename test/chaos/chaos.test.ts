/**
 * The fault suite: jobs are submitted to the sender (`jobhook serve`, Redis queue, a child process)
 * while the webhook path is broken on purpose, and every job must still end delivered and handled
 * exactly once.
 *
 * - Two Fastify example receivers (examples/fastify-receiver/server.mjs, children) share one
 *   Redis idempotency store, behind the fault proxy (round-robin, failover on refused connections).
 * - The proxy breaks ~20 % of jobs on their first request (10 % 500, 5 % hang past the attempt
 *   timeout, 5 % TCP reset), a quarter of those on their second too: seeded per job, never more
 *   faults than the retry budget allows.
 * - After a third of the jobs are handled, one receiver is SIGKILLed (with requests in flight,
 *   outside a claim) and restarted; after two thirds, the sender is SIGKILLed mid-delivery and
 *   restarted on the same port, key and Redis. Work it was running is re-run (BullMQ stalled jobs),
 *   so a webhook may be sent again: the shared store must answer it as a duplicate.
 *
 * CHAOS_JOBS (default 300), CHAOS_SEED. Needs `npx tsc -b` (the children run the builds).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient, type JobDeliveries } from '@jobhook/client';
import { createBullmqWorkQueue, type WorkQueue } from '@jobhook/delivery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedisServer, type RedisServer } from '../../packages/core/test/helpers/redis-server.js';
import {
  assertBuilt,
  killOutsideClaim,
  startExampleReceiver,
  startSenderCli,
  writeSigningKeys,
  type HandledLine,
  type ReceiverKill,
  type SenderCliOptions,
} from '../helpers/chaos-cluster.js';
import { createChaosPlan, MAX_PLANNED_FAULTS, type ChaosPlan } from '../helpers/chaos-plan.js';
import { runningChildPids, stopAllChildren, type ManagedChild } from '../helpers/chaos-processes.js';
import { formatTable, mapConcurrent, tallyHandled } from '../helpers/chaos-report.js';
import { envInteger } from '../helpers/env-integer.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';

const JOBS = envInteger('CHAOS_JOBS', 300);
const SEED = envInteger('CHAOS_SEED', 20_250_611);
/** Submissions in flight at once. */
const SUBMIT_CONCURRENCY = 20;
/** Jobs submitted but not yet handled, at most: keeps submitting while the kills happen. */
const OPEN_JOBS = 60;
const ATTEMPT_TIMEOUT_MS = 1000;
const RETRY_BASE_MS = 150;
const MAX_RETRIES = 3;
const JOB_DELAY_MS = 20;
/** BullMQ lock of the sender's running work, when `serve` lets it be set: how soon a killed sender's work is re-run. */
const QUEUE_LOCK_MS = 2000;
/** Every tenth job fails (simulated), so both final statuses travel. */
const expectedStatus = (seq: number): 'success' | 'fail' => (seq % 10 === 9 ? 'fail' : 'success');
const API_KEY = 'jh_inf_chaosSuiteFixedKey0123456789';
const WEBHOOK_PATH = '/webhooks/jobs';
/** The whole test; the waits inside end 30 s earlier so the report is still printed. */
const TEST_TIMEOUT_MS = 150_000 + JOBS * 30;
const WAIT_DEADLINE_MS = TEST_TIMEOUT_MS - 30_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let tmp: string;
let redis: RedisServer;
let proxy: FaultProxy;
let chaos: ChaosPlan;
let publicKeyFile: string;
let senderOptions: SenderCliOptions;
let sender: { child: ManagedChild; baseUrl: string };
const receivers: Array<{ name: string; port: number; child: ManagedChild }> = [];
let queue: WorkQueue | undefined;

// What the receivers' `job handled` lines said.
const handledTimes = new Map<string, number>();
const handledStatus = new Map<string, string>();
const handledBy = new Map<string, string[]>();
let handledLines = 0;
let wakeWaiters: Array<() => void> = [];
/** Resolves at the next `job handled` line, or after `ms`. */
const nextHandled = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    wakeWaiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });

function onHandled(line: HandledLine): void {
  handledLines++;
  handledTimes.set(line.jobId, (handledTimes.get(line.jobId) ?? 0) + 1);
  handledStatus.set(line.jobId, line.status);
  handledBy.set(line.jobId, [...(handledBy.get(line.jobId) ?? []), line.receiver]);
  const waiters = wakeWaiters;
  wakeWaiters = [];
  for (const wake of waiters) wake();
}

// Sender log lines of interest (`--verbose`).
let stalledReruns = 0;
function onSenderLog(line: string): void {
  if (line.includes('stalled work taken up again')) stalledReruns++;
}

async function startReceiver(name: string, port: number): Promise<ManagedChild> {
  return startExampleReceiver({ name, port, redisUrl: redis.url, publicKeyFile, onHandled });
}

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-chaos-'));
  const keys = writeSigningKeys(tmp);
  publicKeyFile = keys.publicKeyFile;
  redis = await startRedisServer({ own: true });
  for (const name of ['receiver-a', 'receiver-b']) {
    const port = await freePort();
    receivers.push({ name, port, child: await startReceiver(name, port) });
  }
  chaos = createChaosPlan({ seed: SEED });
  proxy = await startFaultProxy({
    targets: receivers.map((r) => `http://127.0.0.1:${r.port}`),
    plan: chaos.plan,
    onExchange: chaos.onExchange,
    failover: true,
  });
  // The killed sender's running work comes back once its queue lock runs out (--queue-lock-ms).
  senderOptions = {
    port: await freePort(),
    redisUrl: redis.url,
    privateKeyFile: keys.privateKeyFile,
    apiKey: API_KEY,
    attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    retryBaseMs: RETRY_BASE_MS,
    maxRetries: MAX_RETRIES,
    jobDelayMs: JOB_DELAY_MS,
    extraArgs: ['--queue-lock-ms', String(QUEUE_LOCK_MS)],
    onLog: onSenderLog,
  };
  sender = await startSenderCli(senderOptions);
  queue = await createBullmqWorkQueue({ connection: redis.url });
}, 60_000);

afterAll(async () => {
  await queue?.close().catch(() => {});
  await stopAllChildren();
  await proxy?.close().catch(() => {});
  await redis?.dispose();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  const left = runningChildPids();
  if (left.length > 0) throw new Error(`child processes left running: ${left.join(', ')}`);
}, 60_000);

describe('chaos: faults, a receiver and the sender killed mid-run', () => {
  it(
    `delivers all ${JOBS} jobs and handles each exactly once`,
    async () => {
      const started = performance.now();
      const deadline = Date.now() + WAIT_DEADLINE_MS;
      const client = createClient({ baseUrl: sender.baseUrl, apiKey: API_KEY, timeoutMs: 10_000 });

      // --- submission: bounded concurrency, at most OPEN_JOBS unhandled, paused while the sender is down
      const jobs: Array<{ seq: number; jobId: string }> = [];
      const submitErrors: string[] = [];
      let nextSeq = 0;
      let submitting = 0;
      let gate: Promise<void> | undefined;
      let openGate = (): void => {};
      const submitter = async (): Promise<void> => {
        while (nextSeq < JOBS && Date.now() < deadline) {
          if (gate !== undefined) {
            await gate;
            continue;
          }
          if (nextSeq - handledTimes.size >= OPEN_JOBS) {
            await nextHandled(200);
            continue;
          }
          const seq = nextSeq++;
          submitting++;
          try {
            const answer = await client.submitJob({
              model: 'ocr/ocr_async/simulated',
              input: { file: `https://files.example/chaos-${seq}.pdf`, simulate: { outcome: expectedStatus(seq) } },
              webhook_receiver: `${proxy.url}${WEBHOOK_PATH}`,
              user_webhook_parameters: { chaos_seq: seq },
            });
            jobs.push({ seq, jobId: answer.job_id });
          } catch (err) {
            submitErrors.push(`#${seq}: ${(err as Error).message}`);
          } finally {
            submitting--;
          }
        }
      };

      /** Resolves true once `count` distinct jobs are handled, false at the deadline. */
      const untilHandled = async (count: number): Promise<boolean> => {
        while (handledTimes.size < count) {
          if (Date.now() > deadline) return false;
          await nextHandled(500);
        }
        return true;
      };

      // --- the kills, driven by handled counts
      const timeline: string[] = [];
      const at = (): string => `${((performance.now() - started) / 1000).toFixed(1)} s`;
      let receiverKill: ReceiverKill | undefined;
      let senderKilled = false;
      let receiverDownMs = 0;
      let senderDownMs = 0;
      const script = (async () => {
        if (!(await untilHandled(Math.ceil(JOBS / 3)))) return;
        const victim = receivers[1]!;
        const down = performance.now();
        receiverKill = await killOutsideClaim(victim.child, redis.port);
        timeline.push(`${at()}: ${victim.name} SIGKILLed at ${handledTimes.size} handled (${receiverKill.rounds} freeze round(s))`);
        victim.child = await startReceiver(victim.name, victim.port);
        receiverDownMs = performance.now() - down;
        timeline.push(`${at()}: ${victim.name} restarted`);

        if (!(await untilHandled(Math.ceil((2 * JOBS) / 3)))) return;
        // Submissions in flight finish first: a job created whose answer was lost would be unknown to the test.
        gate = new Promise((resolve) => (openGate = resolve));
        while (submitting > 0) await sleep(5);
        const senderDown = performance.now();
        await sender.child.kill();
        senderKilled = true;
        timeline.push(`${at()}: sender SIGKILLed at ${handledTimes.size} handled, ${nextSeq} submitted`);
        sender = await startSenderCli(senderOptions);
        senderDownMs = performance.now() - senderDown;
        timeline.push(`${at()}: sender restarted on ${sender.baseUrl}`);
        gate = undefined;
        openGate();
      })();

      await Promise.all(Array.from({ length: SUBMIT_CONCURRENCY }, submitter));
      const submittedAt = performance.now();
      await script;

      // --- settle: the sender's queues empty (re-runs of the killed sender's work included): nothing
      // more will be sent. Jobs not handled by then never will be; a second's grace for their log lines.
      const allHandled = (): boolean => jobs.every((j) => handledTimes.has(j.jobId));
      let handledAllAt = Number.NaN;
      let pending = { jobs: -1, deliveries: -1 };
      let idleSince: number | undefined;
      while (Date.now() < deadline) {
        if (Number.isNaN(handledAllAt) && allHandled()) handledAllAt = performance.now();
        pending = await queue!.counts();
        const drained = pending.jobs === 0 && pending.deliveries === 0;
        idleSince = drained ? (idleSince ?? Date.now()) : undefined;
        if (drained && (allHandled() || Date.now() - idleSince! > 1000)) break;
        await sleep(100);
      }
      const drainedAt = performance.now();

      // --- what the API says of each job
      const views = await mapConcurrent(jobs, 20, async (job) => {
        const deliveries = await client.getDeliveries(job.jobId).catch((err: Error) => err);
        const polled = await client.pollJob(job.jobId, { intervalMs: 100, timeoutMs: 5_000 }).catch((err: Error) => err);
        return { ...job, deliveries, polled };
      });
      const checkedAt = performance.now();

      const tally = tallyHandled(
        jobs.map((j) => j.jobId),
        handledTimes,
      );
      const notDelivered = views.filter((v) => v.deliveries instanceof Error || v.deliveries.delivery !== 'delivered');
      const wrongStatus = views.filter((v) => v.polled instanceof Error || v.polled.status !== expectedStatus(v.seq));
      const wrongHandledStatus = jobs.filter((j) => handledStatus.has(j.jobId) && handledStatus.get(j.jobId) !== expectedStatus(j.seq));
      const attemptsOf = (d: JobDeliveries | Error): number => (d instanceof Error ? 0 : d.attempts.length);
      const attempts = views.reduce((sum, v) => sum + attemptsOf(v.deliveries), 0);
      // An attempt listed twice (same round and number) was re-run after the sender was killed.
      const rerunAttempts = views.reduce((sum, v) => {
        if (v.deliveries instanceof Error) return sum;
        const keys = v.deliveries.attempts.map((a) => `${String(a['round'])}:${String(a['attempt'])}`);
        return sum + keys.length - new Set(keys).size;
      }, 0);
      let duplicatesAnswered = 0;
      let planned = 0;
      let overBudget = 0;
      for (const job of jobs) {
        duplicatesAnswered += (chaos.sightings.get(job.jobId) ?? []).filter((s) => s.duplicate === true).length;
        const faults = chaos.faultsOf(job.seq);
        planned += faults.length;
        if (faults.length > MAX_PLANNED_FAULTS) overBudget++;
      }
      const faultedJobs = jobs.filter((j) => chaos.faultsOf(j.seq).length > 0).length;
      const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

      const table = formatTable(`chaos run: ${JOBS} jobs, seed ${SEED}`, [
        ['submitted', jobs.length],
        ['handled exactly once', tally.once],
        ['handled twice or more', tally.twice],
        ['not delivered (API)', notDelivered.length],
        ['never handled', tally.never.length],
        ['handled but never submitted', tally.unknown.length],
        ['final status wrong (poll)', wrongStatus.length],
        ['jobs with injected faults', `${faultedJobs} (${planned} faults)`],
        ['proxy: 500 / hang / reset', `${proxy.counts.error500} / ${proxy.counts.hang} / ${proxy.counts.reset}`],
        ['proxy: forwarded / 502 / failover', `${proxy.counts.forward} / ${proxy.counts.upstreamError} / ${proxy.counts.failover}`],
        ['receivers: duplicate answers', duplicatesAnswered],
        ['delivery attempts (API)', attempts],
        ['attempts listed twice (re-run)', rerunAttempts],
        ['sender: stalled work re-run', stalledReruns],
        ['receiver down (kill to ready)', sec(receiverDownMs)],
        ['sender down (kill to ready)', sec(senderDownMs)],
        ['queue lock', `${QUEUE_LOCK_MS} ms (--queue-lock-ms)`],
        ['wall: submitted all', sec(submittedAt - started)],
        ['wall: handled all', Number.isNaN(handledAllAt) ? 'never' : sec(handledAllAt - started)],
        ['wall: queues drained', sec(drainedAt - started)],
        ['wall: total (with API checks)', sec(checkedAt - started)],
      ]);
      console.log(`${table}\n${timeline.join('\n')}`);

      if (notDelivered.length > 0 || tally.never.length > 0 || tally.twice > 0) {
        const suspects = new Set([...notDelivered.map((v) => v.jobId), ...tally.never, ...tally.repeated.map((r) => r.jobId)]);
        const lines = views
          .filter((v) => suspects.has(v.jobId))
          .slice(0, 50)
          .map((v) => {
            const d = v.deliveries;
            const list =
              d instanceof Error
                ? `deliveries: ${d.message}`
                : `delivery ${String(d.delivery)}; attempts: ${d.attempts
                    .map((a) => `#${String(a['attempt'])} ${String(a['outcome'])} ${String(a['status_code'] ?? a['error'])}`)
                    .join(', ')}`;
            const seen = (chaos.sightings.get(v.jobId) ?? []).map(
              (s) =>
                `${s.fault}${s.statusCode === undefined ? '' : `:${s.statusCode}`}${s.error === undefined ? '' : `:${s.error}`}${s.duplicate === true ? ':dup' : ''}`,
            );
            return `  #${v.seq} ${v.jobId} handled ${handledTimes.get(v.jobId) ?? 0}x (${(handledBy.get(v.jobId) ?? []).join(', ')}); planned [${chaos.faultsOf(v.seq).join(', ')}]; proxy saw [${seen.join(', ')}]; ${list}`;
          });
        console.log(
          `jobs not delivered exactly once:\n${lines.join('\n')}\nqueues pending: ${JSON.stringify(pending)}\nsender output:\n${sender.child.output().slice(-3000)}`,
        );
      }

      expect(submitErrors, 'submissions refused').toEqual([]);
      expect(jobs.length).toBe(JOBS);
      expect(receiverKill, 'the receiver was killed').toBeDefined();
      expect(receiverKill!.claimsHeld, 'receiver killed holding a claim').toBe(0);
      expect(senderKilled, 'the sender was killed').toBe(true);
      expect(overBudget, 'jobs planned with more faults than the retry budget allows').toBe(0);
      expect(chaos.unreadable, 'webhooks without a readable job_id').toBe(0);
      expect(proxy.counts.error500 + proxy.counts.hang + proxy.counts.reset, 'faults injected').toBeGreaterThanOrEqual(planned);
      expect(pending, 'sender queues drained').toEqual({ jobs: 0, deliveries: 0 });
      expect(
        notDelivered.map((v) => v.jobId),
        'jobs not delivered',
      ).toEqual([]);
      expect(
        wrongStatus.map((v) => v.jobId),
        'jobs whose poll shows another status',
      ).toEqual([]);
      expect(tally.never, 'jobs never handled').toEqual([]);
      expect(tally.repeated, 'jobs handled more than once').toEqual([]);
      expect(tally.unknown, 'handled jobs never submitted').toEqual([]);
      expect(tally.once).toBe(JOBS);
      expect(
        wrongHandledStatus.map((j) => j.jobId),
        'handled with another status',
      ).toEqual([]);
      expect(handledLines).toBe(JOBS);
    },
    TEST_TIMEOUT_MS,
  );
});
