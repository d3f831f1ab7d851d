// Group `availability` (opt-in: not run by a bare `bench/run.mjs` nor by `npm test`): can genuine
// jobs still be delivered while a customer of the service spends real captured signatures against
// someone else's receiver? Per (adapter, attack) run, all on 127.0.0.0/8, every process killed at
// the end (or on failure / Ctrl-C):
//   1. `jobhook serve` (avail-service.mjs): default timings (3 retries, exponential backoff,
//      Retry-After honoured up to 30 s: the retry span is ~95 s), a new key, two organizations;
//   2. the receiver (avail-receiver.mjs) in a child process: one adapter, its defaults, memory store,
//      no recipientSecret, on 127.0.0.1; it records the job ids its handler ran for and its RSS;
//   3. the attacker (avail-attacker.mjs) in a child process: its organization submits CAPTURES jobs
//      to its own capture server on 127.0.0.3 and keeps each delivery's headers and body, then
//      attacks the receiver from 127.0.0.2 for ATTACK_SECONDS (longer than the retry span);
//   4. meanwhile the genuine organization submits one job a second to the receiver;
//   5. after the attack, wait until every genuine job's delivery is final (or DRAIN_SECONDS), then
//      read each job's delivery log (GET …/{job_id}/deliveries) and the receiver's handled ids.
// Options (environment):
//   AVAIL_ADAPTERS=express,koa,fastify,fetch (also fetch-ip)   AVAIL_ATTACKS=replay,trickle,cycle (also none, cycle-raw)
//   AVAIL_ATTACK_SECONDS=100   AVAIL_DRAIN_SECONDS=100   AVAIL_CAPTURES=64
//   AVAIL_ATTACK_ADDRESSES=127.0.0.2 (comma-separated; connections spread over them)
//   AVAIL_MAX_CONNECTIONS=2000000 (per attack)   AVAIL_OUT=bench/results/availability.json
// Run: `npx tsc -b && node --expose-gc bench/run.mjs availability` (~3.5 min a run).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ATTACKS } from './avail-attacker.mjs';
import { forkTracked, makeTempDir, nextMessage, removeTempDir, stopChild, tail } from './avail-processes.mjs';
import { GOALS, summarizeRun } from './avail-summary.mjs';
import { jobCounts, jobDeliveries, startService, submitJob } from './avail-service.mjs';
import { codeVersion, logResult, machine, num, table } from './report.mjs';

export const description =
  'genuine jobs through `jobhook serve` (1/s) while an attacker replays captured signatures (replay, trickle, cycle) at each adapter: first-attempt 2xx share, lost jobs, receiver RSS';

const ADAPTERS = ['express', 'koa', 'fastify', 'fetch'];
/** Named only: createFetchHandler with its `clientAddress` option fed the peer's address. */
const EXTRA_ADAPTERS = ['fetch-ip'];
const DEFAULT_ATTACKS = ['replay', 'trickle', 'cycle'];
/** The receiver's route (every adapter's default). */
const RECEIVER_PATH = '/webhooks/jobs';
const RECEIVER = fileURLToPath(new URL('./avail-receiver.mjs', import.meta.url));
const ATTACKER = fileURLToPath(new URL('./avail-attacker.mjs', import.meta.url));
const CHILD_TIMEOUT_MS = 30_000;
const POLL_MS = 2_000;
const FETCH_CONCURRENCY = 8;

function list(name, fallback, allowed) {
  const raw = process.env[name];
  const values =
    raw === undefined || raw.trim() === ''
      ? fallback
      : raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  const unknown = values.filter((v) => !allowed.includes(v));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')} (known: ${allowed.join(', ')})`);
  return values;
}

function positive(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!(n > 0)) throw new Error(`${name} must be a positive number, got ${raw}`);
  return n;
}

/** The run's settings, from the environment. */
export function availabilitySettings() {
  const addresses = (process.env.AVAIL_ATTACK_ADDRESSES ?? '127.0.0.2')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const a of addresses) {
    // Loopback only, and never the service's own address (what a per-address share must tell apart).
    if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a) || a === '127.0.0.1') {
      throw new Error(`AVAIL_ATTACK_ADDRESSES: ${a} is not a loopback address other than 127.0.0.1`);
    }
  }
  return {
    adapters: list('AVAIL_ADAPTERS', ADAPTERS, [...ADAPTERS, ...EXTRA_ADAPTERS]),
    attacks: list('AVAIL_ATTACKS', DEFAULT_ATTACKS, Object.keys(ATTACKS)),
    attackSeconds: positive('AVAIL_ATTACK_SECONDS', 100),
    drainSeconds: positive('AVAIL_DRAIN_SECONDS', 100),
    captures: Math.floor(positive('AVAIL_CAPTURES', 64)),
    attackAddresses: addresses,
    maxConnections: Math.floor(positive('AVAIL_MAX_CONNECTIONS', 2_000_000)),
    out: resolve(process.env.AVAIL_OUT ?? fileURLToPath(new URL('./results/availability.json', import.meta.url))),
  };
}

/** `fn` over `items`, `concurrency` at a time, results in order. */
async function mapLimit(items, concurrency, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/** One job a second for `seconds`, each submitted on schedule (not after the previous answer). */
async function submitGenuine(service, receiverUrl, seconds) {
  const started = performance.now();
  const pending = [];
  for (let i = 0; i < seconds; i++) {
    const wait = started + i * 1000 - performance.now();
    if (wait > 0) await delay(wait);
    pending.push(
      submitJob(service.url, service.tokens.genuine, receiverUrl, { file: `genuine-${i}` }).then(
        (r) => ({ i, ...r }),
        (err) => ({ i, status: 'error', detail: String(err?.message ?? err) }),
      ),
    );
  }
  return Promise.all(pending);
}

/** Until no genuine job is processing or pending delivery, or `seconds` have passed. Resolves the seconds waited. */
async function drain(service, seconds) {
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  while (performance.now() < deadline) {
    const counts = await jobCounts(service.url, service.tokens.genuine).catch(() => null);
    if (counts !== null && counts.status.processing === 0 && counts.delivery.pending === 0) break;
    await delay(Math.min(POLL_MS, Math.max(0, deadline - performance.now())));
  }
  return (performance.now() - t0) / 1000;
}

/** One (adapter, attack) run, every process stopped and the temp dir removed at the end. */
async function runOne(adapter, attack, settings, log) {
  const dir = makeTempDir('jobhook-avail-');
  const children = [];
  try {
    const service = await startService(dir);
    children.push(service.child);

    const receiver = forkTracked(RECEIVER, [adapter, service.publicKeyPath, RECEIVER_PATH], { execArgv: ['--expose-gc'] });
    children.push(receiver);
    const receiverErr = tail(receiver.stderr);
    let receiverExit;
    receiver.once('exit', (code, signal) => {
      receiverExit = signal ?? code;
    });
    receiver.stdout.resume();
    const { port } = await nextMessage(receiver, (m) => m.type === 'ready', CHILD_TIMEOUT_MS, `receiver ${adapter}`).catch((err) => {
      throw new Error(`${err.message}; stderr: ${receiverErr()}`);
    });
    const receiverUrl = `http://127.0.0.1:${port}${RECEIVER_PATH}`;

    const attacker = forkTracked(ATTACKER, []);
    children.push(attacker);
    const attackerErr = tail(attacker.stderr);
    attacker.stdout.resume();
    attacker.send({
      type: 'capture',
      serviceUrl: service.url,
      token: service.tokens.attacker,
      count: settings.captures,
      captureHost: '127.0.0.3',
    });
    const captured = await nextMessage(attacker, (m) => m.type === 'captured', 150_000, 'attacker capture').catch((err) => {
      throw new Error(`${err.message}; stderr: ${attackerErr()}`);
    });
    log(
      `    captured ${captured.count} deliveries (bodies ${captured.bodyBytes.join('–')} B); attack ${attack} for ${settings.attackSeconds} s`,
    );

    receiver.send({ type: 'baseline' });
    const baseline = await nextMessage(receiver, (m) => m.type === 'baseline', CHILD_TIMEOUT_MS, 'receiver baseline');

    // The machine is shared: the 1-minute load average says how contended the cores were.
    const loadBefore = loadavg()[0];
    const attackStarted = Date.now();
    attacker.send({
      type: 'attack',
      attack,
      receiverPort: port,
      receiverPath: RECEIVER_PATH,
      seconds: settings.attackSeconds,
      localAddresses: settings.attackAddresses,
      maxConnections: settings.maxConnections,
    });
    const attacked = nextMessage(attacker, (m) => m.type === 'attacked', (settings.attackSeconds + 60) * 1000, `attack ${attack}`);
    const submissions = await submitGenuine(service, receiverUrl, Math.round(settings.attackSeconds));
    const { stats: attackerStats } = await attacked;
    const attackSeconds = (Date.now() - attackStarted) / 1000;
    const loadAfter = loadavg()[0];
    log(`    attack over after ${attackSeconds.toFixed(0)} s (${num(attackerStats.connectionsOpened)} connections); draining`);

    const drainSeconds = await drain(service, settings.drainSeconds);
    const jobs = submissions.filter((s) => s.jobId !== undefined);
    const logs = await mapLimit(jobs, FETCH_CONCURRENCY, (s) =>
      jobDeliveries(service.url, service.tokens.genuine, s.jobId).catch(() => null),
    );
    // A receiver that died under the attack (out of memory, say) is a result too: the service's logs
    // still say what became of every job.
    let receiverStats;
    if (receiverExit === undefined) {
      receiver.send({ type: 'stats' });
      receiverStats = await nextMessage(receiver, (m) => m.type === 'stats', CHILD_TIMEOUT_MS, 'receiver stats').catch(() => undefined);
    }
    receiverStats ??= { handled: {}, rssPeak: Number.NaN, rssNow: Number.NaN, receiverStats: null, exited: receiverExit ?? 'no answer' };
    return summarizeRun({
      load: { before: loadBefore, after: loadAfter },
      adapter,
      attack,
      submissions,
      logs,
      receiverStats,
      baselineRss: baseline.rss,
      attackerStats,
      captured,
      attackSeconds,
      drainSeconds,
    });
  } finally {
    await Promise.all(children.map((c) => stopChild(c)));
    removeTempDir(dir);
  }
}

/** @param {{ log: (s: string) => void }} ctx */
export async function run({ log }) {
  const settings = availabilitySettings();
  const runs = [];
  const total = settings.adapters.length * settings.attacks.length;
  log(
    `  ${total} run(s): adapters ${settings.adapters.join(', ')}; attacks ${settings.attacks.join(', ')}; ${settings.attackSeconds} s attack + ≤ ${settings.drainSeconds} s drain each; attacker from ${settings.attackAddresses.join(', ')}`,
  );
  const header = { date: new Date().toISOString(), machine: machine(), code: codeVersion(), settings };
  for (const attack of settings.attacks) {
    for (const adapter of settings.adapters) {
      log(`  [${runs.length + 1}/${total}] ${adapter} × ${attack}`);
      // One run failing (a child that did not start, a capture that timed out) does not end the others.
      const result = await runOne(adapter, attack, settings, log).catch((err) => ({ adapter, attack, error: String(err?.stack ?? err) }));
      runs.push(result);
      log(`    ${result.error === undefined ? rowText(result) : `FAILED: ${result.error}`}`);
      mkdirSync(dirname(settings.out), { recursive: true });
      writeFileSync(settings.out, `${JSON.stringify({ ...header, runs }, null, 2)}\n`);
    }
  }
  const text = resultTable(runs);
  const notes = [
    `goals (issue 28): first attempts 2xx ≥ ${GOALS.firstAttemptShare * 100} %, ${GOALS.lostJobs} jobs lost, receiver RSS peak − baseline ≤ ${GOALS.rssDeltaMB} MB.`,
    'jobs = genuine jobs submitted (one a second during the attack); 1st 2xx = share of their first delivery attempts answered 2xx; 1st-attempt answers = status (or error) of each first attempt.',
    'lost = final delivery state not delivered (retries exhausted) and never handled by the receiver; unresolved = still pending when the drain ended and not handled.',
    'RSS = the receiver process (its own child), sampled every 250 ms; baseline after gc() just before the attack.',
    'attacker = connections opened by the attacker and the statuses it was answered (a connection carries one request).',
    'load = the 1-minute load average when the attack started → when it ended (2 cores; this bench alone adds ~2).',
    `every run's details: ${settings.out}`,
  ];
  logResult(log, text, notes);
  return { text, notes, data: { settings, runs } };
}

function statusText(counts) {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}×${v}`)
    .join(', ');
}

function rowText(r) {
  return `jobs ${r.genuine.submitted}, first 2xx ${(r.genuine.firstAttemptShare * 100).toFixed(1)} % (${statusText(r.genuine.firstStatuses)}), delivered ${r.genuine.delivered}, lost ${r.genuine.lost}, unresolved ${r.genuine.unresolved}, RSS ${r.rss.baselineMB.toFixed(0)} MB +${r.rss.deltaMB.toFixed(0)} MB, attacker ${num(r.attacker.connectionsOpened)} connections (${statusText(r.attacker.statuses)})`;
}

/** The group's table: one row per run. */
export function resultTable(runs) {
  const columns = [
    { header: 'adapter', align: 'left' },
    { header: 'attack', align: 'left' },
    { header: 'jobs' },
    { header: '1st 2xx' },
    { header: '1st-attempt answers', align: 'left' },
    { header: 'delivered' },
    { header: 'lost' },
    { header: 'unresolved' },
    { header: 'RSS base MB' },
    { header: 'RSS peak Δ MB' },
    { header: 'attacker conns' },
    { header: 'attacker answers', align: 'left' },
    { header: 'load', align: 'left' },
    { header: 'goals', align: 'left' },
  ];
  const rows = runs.map((r) =>
    r.error !== undefined
      ? [r.adapter, r.attack, ...Array(columns.length - 3).fill('—'), `FAILED: ${r.error.split('\n')[0].slice(0, 80)}`]
      : [
          r.adapter,
          r.attack,
          num(r.genuine.submitted),
          `${(r.genuine.firstAttemptShare * 100).toFixed(1)} %`,
          statusText(r.genuine.firstStatuses),
          num(r.genuine.delivered),
          num(r.genuine.lost),
          num(r.genuine.unresolved),
          num(r.rss.baselineMB),
          `+${num(r.rss.deltaMB)}`,
          num(r.attacker.connectionsOpened),
          statusText(r.attacker.statuses) || '—',
          `${r.load.before.toFixed(1)}→${r.load.after.toFixed(1)}`,
          r.goals.met ? 'met' : `MISSED (${r.goals.missed.join(', ')})`,
        ],
  );
  return table(columns, rows);
}
