// What the HTTP groups (adapter-express, adapter-koa, adapter-fastify) share. A group starts its
// framework's apps in a worker thread (one core) and loads them with autocannon from the main thread
// (the other core), all with the same requests and the same clock:
//
//   measureGroup({...})              a group's run(): the steps below, then its tables → run.mjs's answer
//     signedPool(log)                the pre-signed requests (webhook-1kb, RSA-3072, a new job_id each),
//                                    cached in bench/results/adapter-pool.json
//     startServers(moduleUrl, pem)   runs the group's own module as the servers worker
//     runRounds(...)                 warm-up, then interleaved rounds over all the apps (runLoad: one
//                                    autocannon run), summed per app
//     report(...)                    notes, problems, target row
//   serveApps(build)                 in the servers worker: builds the apps, listens, answers 'elu' and 'stats'
//   listen(app), naiveVerifier(pem)  building blocks of the apps
//   appTable, ratioTable             the group's tables (report.mjs `table`)
//   runAlone(moduleUrl, group)       `node bench/adapter-koa.bench.mjs`
//
// A group module ends with `await serveApps(startApps); await runAlone(import.meta.url, { description, run });`
// (each a no-op in the other threads). Apps are named: `adapter`, `handWritten` (the naive recipe,
// the speed reference), `bare` (the framework's floor), plus any diagnostic row.
import { constants, createHash, createPublicKey, generateKeyPair, randomUUID, verify } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { DEFAULT_HEADER_NAMES, loadPrivateKey, signPayload } from '@jobhook/core/sign';
import { DEFAULT_SETTINGS } from './harness.mjs';
import { getPayload } from './payloads.mjs';
import { num, ops, ratio, table, verdict, logResult } from './report.mjs';
import { naiveCanonical } from './naive-recipe.mjs';

/** Minimum adapter / hand-written req/s ratio. */
export const TARGET = 0.9;
const CONNECTIONS = 10;
const KEY_BITS = 3072;
export const PATH = '/webhooks/jobs';
export const HOST = '127.0.0.1';
/** The apps that do not deduplicate cycle through this many requests. */
const CYCLE = 400;
/** Fresh requests ready before a run: MARGIN × the fastest fresh rate so far (FIRST_RATE before any) × its length. */
const MARGIN = 3;
const FIRST_RATE = 5_000;
/** autocannon builds a request ahead per connection. */
const SLACK = 4 * CONNECTIONS;
/**
 * Signed requests are kept between runs (git-ignored), for all three groups. Reuse is sound: each run
 * starts new memory stores, so a job_id only has to be unique within a run. Signing is the slow part
 * (RSA-3072: ~2 ms a signature).
 */
const CACHE = fileURLToPath(new URL('./results/adapter-pool.json', import.meta.url));
const ROLE_SIGNER = 'http-bench:signer';
const ROLE_SERVERS = 'http-bench:servers';

// ---------------------------------------------------------------- the signed pool

/** Signer worker: `count` copies of the template, each with a new job_id: `[jobId, signatureHex]` pairs. */
function signBatch({ privateKeyPem, template, templateJobId, count, profile }) {
  const key = loadPrivateKey(privateKeyPem); // once: a PEM would be decoded on every call
  const out = [];
  for (let i = 0; i < count; i++) {
    const jobId = randomUUID();
    out.push([jobId, signPayload(Buffer.from(template.replace(templateJobId, jobId), 'utf8'), key, { profile }).signature]);
  }
  return out;
}

/** Signs `count` more `[jobId, signature]` pairs on all cores (at most 8 threads). */
async function signMore(count, signer, profile) {
  const threads = Math.max(1, Math.min(availableParallelism(), 8));
  const shares = Array.from({ length: threads }, (_, i) => Math.floor(count / threads) + (i < count % threads ? 1 : 0));
  const parts = await Promise.all(
    shares.map(async (share) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE_SIGNER, count: share, profile, ...signer } });
      const [pairs] = await once(worker, 'message');
      return pairs;
    }),
  );
  return parts.flat();
}

/**
 * The signed requests: the python-style body of payloads.mjs `webhook-1kb` with a new job_id each,
 * RSA-3072, key pair and signatures from the cache when it was made for this body, else new.
 * `take(profile, count)` signs what is missing (and saves the cache), then returns the profile's
 * request list, at least `count` long, as autocannon `{ body, headers }` parts; the list only grows.
 * Profile `python` is the service's (what the adapters verify); `javascript` is what the naive
 * recipe computes (sorted-keys JSON.stringify: 1.0 becomes 1), so the hand-written route verifies it.
 */
async function signedPool(log) {
  const payload = getPayload('webhook-1kb');
  const template = payload.bodies.python.toString('utf8');
  const templateJobId = payload.value.job_id;
  const templateHash = createHash('sha256').update(template).digest('hex');
  let cache;
  try {
    cache = JSON.parse(readFileSync(CACHE, 'utf8'));
    if (cache.templateHash !== templateHash || cache.keyBits !== KEY_BITS) cache = undefined;
  } catch {
    cache = undefined;
  }
  if (cache === undefined) {
    const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: KEY_BITS, publicExponent: 65537 });
    cache = {
      templateHash,
      keyBits: KEY_BITS,
      publicKeyPem: publicKey.export({ type: 'pkcs1', format: 'pem' }),
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      python: [],
      javascript: [],
    };
  }
  const signer = { privateKeyPem: cache.privateKeyPem, template, templateJobId };
  const { headers } = signPayload(Buffer.from(template), cache.privateKeyPem);
  const requests = { python: [], javascript: [] };
  return {
    publicKeyPem: cache.publicKeyPem,
    bodyBytes: payload.bodies.python.length,
    async take(profile, count) {
      const signed = cache[profile];
      if (signed.length < count) {
        const more = count - signed.length;
        const t0 = performance.now();
        signed.push(...(await signMore(more, signer, profile)));
        mkdirSync(dirname(CACHE), { recursive: true });
        writeFileSync(`${CACHE}.tmp`, JSON.stringify(cache));
        renameSync(`${CACHE}.tmp`, CACHE);
        log(
          `  signed ${num(more)} ${profile} requests (RSA-${KEY_BITS}) in ${((performance.now() - t0) / 1000).toFixed(1)} s; cached in bench/results/${basename(CACHE)}`,
        );
      }
      const list = requests[profile];
      for (let i = list.length; i < count; i++) {
        const [jobId, signature] = signed[i];
        list.push({ body: template.replace(templateJobId, jobId), headers: { ...headers, [DEFAULT_HEADER_NAMES.signature]: signature } });
      }
      return list;
    },
  };
}

// ---------------------------------------------------------------- the servers worker

/**
 * Main thread: runs `moduleUrl` (the group's module, which calls serveApps) as the servers worker.
 * Returns `{ urls: { [app]: origin }, ask(msg) → the worker's answer, close() }`.
 */
async function startServers(moduleUrl, publicKeyPem) {
  const worker = new Worker(new URL(moduleUrl), { workerData: { role: ROLE_SERVERS, publicKeyPem } });
  const [{ urls }] = await once(worker, 'message');
  const ask = async (msg) => {
    const reply = once(worker, 'message');
    worker.postMessage(msg);
    return (await reply)[0];
  };
  return { urls, ask, close: () => worker.terminate() };
}

/**
 * In the servers worker (elsewhere a no-op): `build(publicKeyPem)` returns `{ servers, stats }`,
 * `servers` an object app name → (a promise of) a listening `http.Server`, `stats()` what the group
 * reports: `{ receivers: { [app]: receiver.stats() }, handWrittenFailures, ... }`. Posts the apps'
 * origins, then answers 'elu' (the thread's performance.eventLoopUtilization()) and 'stats'.
 */
export async function serveApps(build) {
  if (isMainThread || workerData?.role !== ROLE_SERVERS) return;
  const { servers, stats } = await build(workerData.publicKeyPem);
  const names = Object.keys(servers);
  const listening = await Promise.all(Object.values(servers));
  parentPort.on('message', (msg) => {
    if (msg === 'elu') parentPort.postMessage(performance.eventLoopUtilization());
    else if (msg === 'stats') parentPort.postMessage(stats());
  });
  parentPort.postMessage({ urls: Object.fromEntries(names.map((name, i) => [name, `http://${HOST}:${listening[i].address().port}`])) });
}

/** `app.listen` on a free loopback port (Express, Koa): resolves with the `http.Server`. */
export function listen(app) {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, HOST, (err) => (err ? reject(err) : resolve(server)));
  });
}

/**
 * The hand-written route's work, the naive recipe: JSON.parse, keys sorted deep, JSON.stringify(v,
 * null, 2), sha256 hex, crypto.verify with a cached KeyObject. Not exact (1.0 → 1, 30-digit
 * integers), no dedupe, no shape check. `verify(rawBody, signatureHex)` → boolean; `failures` counts
 * the false ones (an unparsable body included).
 */
export function naiveVerifier(publicKeyPem) {
  const key = createPublicKey(publicKeyPem);
  return {
    failures: 0,
    verify(raw, signatureHex) {
      try {
        const canonical = naiveCanonical(raw);
        const digest = createHash('sha256').update(canonical).digest('hex');
        const signature = Buffer.from(String(signatureHex), 'hex');
        if (verify('sha256', Buffer.from(digest), { key, padding: constants.RSA_PKCS1_PADDING }, signature)) return true;
      } catch {
        // an unparsable body: a failure like a bad signature
      }
      this.failures++;
      return false;
    },
  };
}

// ---------------------------------------------------------------- measuring (main thread)

/**
 * One autocannon run: `POST PATH` to `url`, CONNECTIONS connections, keep-alive, no pipelining, for
 * `seconds` (checked on a 100 ms tick), each request from `next()`. When `next()` answers undefined
 * (the fresh requests ran out) the run stops at the next tick, resending the last request meanwhile
 * (duplicates, which the receiver's stats then show). `ask` reads the server thread's event-loop use.
 * Returns `{ ok, responses, non2xx, errors, seconds, serverActiveMs, p50, p99, exhausted }`.
 */
async function runLoad({ url, next, seconds, ask }) {
  const eluBefore = await ask('elu');
  let last;
  let exhausted = false;
  let instance;
  const setupRequest = (req) => {
    const parts = next();
    if (parts !== undefined) last = parts;
    else if (!exhausted) {
      exhausted = true;
      setImmediate(() => instance.stop()); // maybe called from inside autocannon(): stop once it has returned
    }
    return { ...req, ...last };
  };
  instance = autocannon({
    url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    sampleInt: 100,
    requests: [{ method: 'POST', path: PATH, setupRequest }],
  });
  const result = await instance; // the tracker is a thenable
  const eluAfter = await ask('elu');
  return {
    ok: result['2xx'],
    responses: result['2xx'] + result.non2xx,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: (result.finish - result.start) / 1000,
    serverActiveMs: eluAfter.active - eluBefore.active,
    p50: result.latency.p50,
    p99: result.latency.p99,
    exhausted,
  };
}

/** Sums an app's runs: req/s over all of them (2xx answers / seconds), the slowest and fastest run, the server's busy µs per answer. */
function summarize(runs) {
  const total = (key) => runs.reduce((a, r) => a + r[key], 0);
  const each = runs.map((r) => r.ok / r.seconds);
  return {
    rps: total('ok') / total('seconds'),
    requests: total('ok'),
    seconds: total('seconds'),
    min: Math.min(...each),
    max: Math.max(...each),
    serverUsPerRequest: (total('serverActiveMs') * 1000) / total('responses'),
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    non2xx: total('non2xx'),
    errors: total('errors'),
    exhausted: runs.some((r) => r.exhausted),
  };
}

/**
 * Measures `apps` (names, in table order) on `servers` (from startServers). Apps in `fresh`
 * deduplicate (each has its own memory store): each gets every python-signed request once, so every
 * request carries a new job_id; the pool is topped up before each of their runs, between runs. The
 * others cycle through CYCLE javascript-signed requests, checked first to be answered 200.
 * Timing from run.mjs's settings: per app a warm-up of 4 × `warmup` (≥ 0.5 s), then 5 × `time` in
 * all (≥ 1 s), in `rounds` rounds whose order is reversed every other round (a b c, c b a, …) so
 * drift on a shared machine hits all apps alike.
 * Returns `{ results: { [app]: sums }, runs: { [app]: [runLoad()] }, handedOut: { [fresh app]: n },
 * rounds, roundSeconds, warmupSeconds, bodyBytes }`.
 */
async function runRounds({ servers, pool, apps, fresh, rounds, settings, log }) {
  const measureSeconds = Math.max(1, (5 * settings.time) / 1000);
  const warmupSeconds = Math.max(0.5, (4 * settings.warmup) / 1000);
  const roundSeconds = measureSeconds / rounds;
  const cycle = await pool.take('javascript', CYCLE);
  for (const name of apps.filter((n) => !fresh.includes(n))) {
    const res = await fetch(`${servers.urls[name]}${PATH}`, { method: 'POST', ...cycle[0] });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${name} answered ${res.status} to a signed request`);
  }

  const handedOut = Object.fromEntries(fresh.map((name) => [name, 0]));
  let jobs = [];
  let rate; // the fastest fresh run so far, req/s
  const load = async (name, seconds) => {
    let next;
    if (name in handedOut) {
      jobs = await pool.take('python', handedOut[name] + Math.ceil((rate ?? FIRST_RATE) * seconds * MARGIN) + SLACK);
      next = () => (handedOut[name] < jobs.length ? jobs[handedOut[name]++] : undefined);
    } else {
      let i = 0;
      next = () => cycle[i++ % cycle.length];
    }
    const run = await runLoad({ url: servers.urls[name], next, seconds, ask: servers.ask });
    if (name in handedOut) rate = Math.max(rate ?? 0, run.ok / run.seconds);
    return run;
  };

  log(`  warm-up ${warmupSeconds} s each: ${apps.join(', ')}…`);
  for (const name of apps) await load(name, warmupSeconds);
  const runs = Object.fromEntries(apps.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? apps : [...apps].reverse();
    log(`  round ${round + 1}/${rounds}, ${roundSeconds} s each: ${order.join(', ')}…`);
    for (const name of order) runs[name].push(await load(name, roundSeconds));
  }
  const results = Object.fromEntries(apps.map((name) => [name, summarize(runs[name])]));
  return { results, runs, handedOut, rounds, roundSeconds, warmupSeconds, bodyBytes: pool.bodyBytes };
}

// ---------------------------------------------------------------- reporting

/** Table columns: header → cell of an app's sums (`all`: every app's, for ratios). */
const COLUMNS = {
  'req/s': (r) => ops(r.rps),
  'rounds min–max': (r) => `${ops(r.min)}–${ops(r.max)}`,
  'server µs/req': (r) => r.serverUsPerRequest.toFixed(0),
  'p50 ms': (r) => r.p50.toFixed(1),
  'p99 ms': (r) => r.p99.toFixed(1),
  requests: (r) => num(r.requests),
  s: (r) => r.seconds.toFixed(1),
  'vs hand-written': (r, all) => ratio(r.rps / all.handWritten.rps),
};

/** One row per `[label, app]` of `rows`, with the named `columns` (keys of COLUMNS); first column header `first`. */
export function appTable(results, rows, columns, first = 'app') {
  return table(
    [{ header: first, align: 'left' }, ...columns.map((header) => ({ header }))],
    rows.map(([label, name]) => [label, ...columns.map((c) => COLUMNS[c](results[name], results))]),
  );
}

/** The ratio table: adapter / hand-written against TARGET, adapter / bare, hand-written / bare, then `more` rows `[label, value]`. */
export function ratioTable(r, more = []) {
  const value = r.adapter.rps / r.handWritten.rps;
  const rows = [['adapter / bare', r.adapter.rps / r.bare.rps], ['hand-written / bare', r.handWritten.rps / r.bare.rps], ...more];
  return table(
    [{ header: 'ratio', align: 'left' }, { header: 'value' }, { header: `≥${TARGET.toFixed(2)}×?` }],
    [['adapter / hand-written', ratio(value), verdict(value, TARGET)], ...rows.map(([label, v]) => [label, ratio(v), '—'])],
  );
}

/** What would make the figures unsound, a sentence each (`stats`: the servers worker's answer to 'stats'). */
function findProblems({ results, handedOut }, stats) {
  const problems = [];
  for (const [name, r] of Object.entries(results)) {
    if (r.non2xx > 0 || r.errors > 0) problems.push(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors/timeouts`);
  }
  for (const name of Object.keys(handedOut)) {
    if (results[name].exhausted) problems.push(`${name}: the job_id pool ran out (measured ${results[name].seconds.toFixed(1)} s)`);
  }
  for (const [name, s] of Object.entries(stats.receivers)) {
    if (s.duplicates > 0) problems.push(`${name}: ${s.duplicates} requests were duplicates`);
    const rejected = Object.entries(s.rejected);
    if (rejected.length > 0) problems.push(`${name} rejections: ${rejected.map(([code, n]) => `${code} ${n}`).join(', ')}`);
  }
  if (stats.handWrittenFailures > 0) problems.push(`hand-written: ${stats.handWrittenFailures} failed verifications`);
  return problems;
}

/** How the group measured: the notes every HTTP group shares. */
function methodNotes(m) {
  const fresh = Object.keys(m.handedOut);
  return [
    `load: autocannon in the main thread, ${CONNECTIONS} connections, keep-alive, no pipelining; the apps in one worker thread (one core). Body: webhook-1kb of bench/payloads.mjs, python json.dumps style (${num(m.bodyBytes)} B); RSA-${KEY_BITS}, e = 65537.`,
    `requests: ${fresh.join(' and ')} ${fresh.length > 1 ? 'each get' : 'gets'} every job_id once (a pre-signed pool, topped up between runs to ${MARGIN}× the fastest rate seen; a run stops if it runs out), so every answer is a new job handled; the other apps cycle through ${CYCLE} requests signed with the javascript profile, which the naive recipe verifies.`,
    `timing: per app a ${m.warmupSeconds} s warm-up, then ${m.rounds} rounds of ${m.roundSeconds} s, the order reversed every other round (a b c, c b a, …). req/s = 2xx answers / seconds (autocannon's start to finish) over all rounds; "rounds min–max" = the spread of the per-round rates; server µs/req = the worker's event-loop busy time (performance.eventLoopUtilization) ÷ answers, what a request costs the server whatever the load generator does.`,
    `Signed requests are cached in bench/results/${basename(CACHE)} (key pair included) for the three groups: a first run signs (~2 ms per request, on all cores), later runs sign only what is missing.`,
  ];
}

/**
 * The group's answer to run.mjs, logged as it goes: `text` (its tables), `summary` lines, then the
 * notes — the group's `notes`, the shared method notes, the counts, and a `PROBLEM:` line for
 * anything that makes the figures unsound (which also marks the target missed). The target is
 * adapter / hand-written req/s ≥ TARGET, named `targetName`.
 */
function report({ log, text, summary = [], notes, measured, stats, data = {}, targetName }) {
  const { results, runs, handedOut, rounds, roundSeconds, warmupSeconds, bodyBytes } = measured;
  const problems = findProblems(measured, stats);
  const counts = Object.entries(stats.receivers).map(
    ([name, s]) =>
      `${name}: ${num(handedOut[name])} job_ids handed out, receiver handled ${num(s.handled)} of ${num(s.received)}, duplicates ${s.duplicates}`,
  );
  const allNotes = [
    ...notes,
    ...methodNotes(measured),
    `${counts.join('; ')}${stats.handlerRuns === undefined ? '' : `; handlers ran ${num(stats.handlerRuns)} times`}.`,
    ...problems.map((p) => `PROBLEM: ${p}`),
  ];
  logResult(log, text, allNotes, summary);
  const value = results.adapter.rps / results.handWritten.rps;
  return {
    text,
    notes: allNotes,
    data: {
      connections: CONNECTIONS,
      keyBits: KEY_BITS,
      rounds,
      roundSeconds,
      warmupSeconds,
      bodyBytes,
      ...data,
      results,
      receivers: stats.receivers,
      handedOut,
      runs,
    },
    targets: [{ name: targetName, value, min: TARGET, met: value >= TARGET && problems.length === 0 }],
  };
}

/**
 * A group's `run()`: signs or loads the pool, starts `moduleUrl` (the group's module) as the servers
 * worker, measures `apps` (names in table order; `fresh`: those with a receiver, which get a new
 * job_id per request) in `rounds` rounds, then `tables(results)` → `{ text, summary?, data? }` (the
 * group's tables, lines logged after them, extra data). Returns `{ text, notes, data, targets }`.
 */
export async function measureGroup({ moduleUrl, settings, log, apps, fresh, rounds, notes, targetName, tables }) {
  const pool = await signedPool(log);
  const servers = await startServers(moduleUrl, pool.publicKeyPem);
  try {
    const measured = await runRounds({ servers, pool, apps, fresh, rounds, settings, log });
    const stats = await servers.ask('stats');
    return report({ log, ...tables(measured.results), notes, measured, stats, targetName });
  } finally {
    await servers.close();
  }
}

/** `node bench/<group>.bench.mjs`: runs `group` with the default settings when `moduleUrl` is the main script (elsewhere a no-op). */
export async function runAlone(moduleUrl, group) {
  if (!isMainThread || process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  console.log(`## ${basename(fileURLToPath(moduleUrl), '.bench.mjs')} — ${group.description}\n`);
  const out = await group.run({ settings: DEFAULT_SETTINGS, log: (s) => console.log(s) });
  if (out.targets.some((t) => !t.met)) process.exitCode = 1;
}

if (!isMainThread && workerData?.role === ROLE_SIGNER) parentPort.postMessage(signBatch(workerData));
