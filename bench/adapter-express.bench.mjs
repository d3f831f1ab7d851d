// Group `adapter-express`: HTTP requests/s through Express on loopback (autocannon, 10 connections,
// ~1 KB webhook, RSA-3072, memory store) for
//   (a) adapter      app.post(path, createExpressMiddleware(...)): the whole pipeline, every job_id new;
//   (b) hand-written app.post(path, naive verifying route): raw-body, JSON.parse, sorted-keys
//                    JSON.stringify(…, null, 2), sha256 hex, crypto.verify with a cached KeyObject;
//   (c) bare         app.post(path, (req, res) => 200), body not even read: Express's floor.
// The three Express apps run in one worker thread (one core), autocannon in the main thread (the
// other core). Measured in two rounds, a b c then c b a, so drift hits all three alike.
//
//   node bench/adapter-express.bench.mjs          (alone; needs the build: npx tsc -b)
//   node --expose-gc bench/run.mjs adapter-express (as a group, once listed in run.mjs)
import { constants, createHash, generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

export const description = 'HTTP req/s through Express (autocannon, 10 connections, 1 KB, RSA-3072): @jobhook/express vs a hand-written verifying route vs a bare 200 route';

/** Minimum adapter / hand-written ratio. */
export const TARGET = 0.9;
const CONNECTIONS = 10;
const KEY_BITS = 3072;
const PATH = '/webhooks/jobs';
const ROUNDS = 2;
const ROLE_SERVERS = 'adapter-express:servers';
const ROLE_SIGNER = 'adapter-express:signer';

export const NOTES = [
  `adapter      = app.post(path, createExpressMiddleware({ publicKeys, onEvent }) (the default memory store)): raw body (raw-body), content type, signature, lossless parse, python canonical form, sha256, RSA verify, payload check, claim, handler (empty), complete, JSON answer. Every request carries a job_id never sent before (a pre-signed pool; the run stops if it runs out).`,
  'hand-written = the naive recipe on the same Express: raw-body, JSON.parse, sorted-keys JSON.stringify(v, null, 2), sha256 hex, crypto.verify with a cached KeyObject, 200. Not exact (1.0 becomes 1, no dedupe, no checks), but the speed to match: the payload is chosen so its JavaScript and Python canonical forms agree and it verifies.',
  'bare         = app.post(path, (req, res) => res.writeHead(200).end(...)): Express routing and Node HTTP only; the body is not read.',
  'server µs/req = the worker thread\'s event-loop busy time (performance.eventLoopUtilization) over the run ÷ responses: what one request costs the server, independent of the load generator; "by server busy time" = hand-written µs ÷ adapter µs.',
  `autocannon in the main thread, ${CONNECTIONS} connections, keep-alive, no pipelining; the three apps in one worker thread. Each app: a warm-up, then ${ROUNDS} rounds (a b c, c b a) summed.`,
];

// ---------------------------------------------------------------- payload and signing

/** A ~1 KB sentiment-analysis event whose JSON.stringify(sorted) form equals the python canonical form. */
function buildEvent() {
  return {
    event: 'async_job_completed',
    job_id: randomUUID(),
    status: 'success',
    feature: 'text',
    subfeature: 'sentiment_analysis_async',
    provider: 'google',
    model: null,
    created_at: '2026-11-22T09:30:00.123456+00:00',
    finished_at: '2026-11-22T09:30:01.654321+00:00',
    output: {
      general_sentiment: 'Positive',
      general_sentiment_rate: 0.8731,
      items: [
        { segment: 'La livraison était rapide et le café excellent.', sentiment: 'Positive', sentiment_rate: 0.9412 },
        { segment: 'Le service client a mis du temps à répondre.', sentiment: 'Negative', sentiment_rate: 0.6127 },
        { segment: 'Je recommande, commande n°4821 — café crème ☕', sentiment: 'Positive', sentiment_rate: 0.8875 },
      ],
    },
    user_parameters: { language: 'fr', text_length: 157, request_id: 'req-2026-11-22-0042', source: 'avis-clients/2026-11/lot-7.csv', priority: 3 },
  };
}

/** Worker: signs `count` events with the PKCS#8 PEM key; posts `[{ body, signature }]`. */
async function signerMain({ privateKeyPem, count }) {
  const { signPayload, loadPrivateKey } = await import('@jobhook/core');
  const key = loadPrivateKey(privateKeyPem); // once: a PEM would be decoded on every call
  const out = [];
  for (let i = 0; i < count; i++) {
    const { body, signature } = signPayload(buildEvent(), key);
    out.push({ body, signature });
  }
  parentPort.postMessage(out);
}

/** Signs `count` fresh events on every core; returns autocannon request parts. */
async function signPool(privateKeyPem, count) {
  const workers = Math.max(1, availableParallelism());
  const share = Math.ceil(count / workers);
  const parts = await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const n = Math.max(0, Math.min(share, count - w * share));
      if (n === 0) return [];
      const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE_SIGNER, privateKeyPem, count: n } });
      const [signed] = await once(worker, 'message');
      await worker.terminate();
      return signed;
    }),
  );
  return parts.flat().map(({ body, signature }) => ({
    body: Buffer.from(body),
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signature,
      'x-service-hash-algorithm': 'SHA256',
      'x-service-webhook': 'async_job_completed',
    },
  }));
}

// ---------------------------------------------------------------- the three Express apps (worker)

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key]);
    return out;
  }
  return value;
}

async function serversMain({ publicKeyPem }) {
  const { createPublicKey } = await import('node:crypto');
  const { default: express } = await import('express');
  const { default: getRawBody } = await import('raw-body');
  const { createExpressMiddleware } = await import('@jobhook/express');
  const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
  let handlerRuns = 0;

  const adapter = express();
  // The receiver's default store: createMemoryStore() (100,000 done jobs remembered).
  const middleware = createExpressMiddleware({ publicKeys: publicKeyPem, onEvent: () => void handlerRuns++ });
  adapter.post(PATH, middleware);

  const handWritten = express();
  const key = createPublicKey(publicKeyPem);
  let handWrittenFailures = 0;
  handWritten.post(PATH, async (req, res) => {
    try {
      const raw = await getRawBody(req, { limit: 1_048_576, length: req.headers['content-length'] });
      const canonical = JSON.stringify(sortKeys(JSON.parse(raw.toString('utf8'))), null, 2);
      const digest = createHash('sha256').update(canonical).digest('hex');
      const signature = Buffer.from(String(req.headers['x-service-signature']), 'hex');
      if (verify('sha256', Buffer.from(digest), { key, padding: constants.RSA_PKCS1_PADDING }, signature)) {
        res.writeHead(200, JSON_HEADERS).end('{"ok":true}');
        return;
      }
      handWrittenFailures++;
      res.writeHead(401, JSON_HEADERS).end('{"error":"signature"}');
    } catch {
      handWrittenFailures++;
      res.writeHead(400, JSON_HEADERS).end('{"error":"body"}');
    }
  });

  const bare = express();
  bare.post(PATH, (_req, res) => {
    res.writeHead(200, JSON_HEADERS).end('{"ok":true}');
  });

  const listen = (app) =>
    new Promise((resolve, reject) => {
      const server = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(server)));
    });
  const servers = await Promise.all([adapter, handWritten, bare].map(listen));
  parentPort.on('message', async (msg) => {
    if (msg === 'elu') parentPort.postMessage(performance.eventLoopUtilization());
    if (msg === 'stats') parentPort.postMessage({ stats: middleware.receiver.stats(), handlerRuns, handWrittenFailures });
    if (msg === 'close') {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      parentPort.postMessage('closed');
    }
  });
  parentPort.postMessage({ ports: servers.map((server) => server.address().port) });
}

// ---------------------------------------------------------------- measuring (main thread)

/**
 * One autocannon run of `seconds` against `port`, each request from `next()`. When `next()` has no
 * request left it answers undefined and the run stops (within autocannon's 100 ms sample tick;
 * meanwhile `spare` is sent, a duplicate the caller reports).
 */
async function load(port, seconds, next, spare, ask) {
  const eluBefore = await ask('elu');
  let instance;
  let exhausted = false;
  const setupRequest = (req) => {
    const parts = next();
    if (parts !== undefined) return { ...req, ...parts };
    // Maybe called from inside autocannon(): stop once it has returned.
    if (!exhausted) setImmediate(() => instance.stop());
    exhausted = true;
    return { ...req, ...spare };
  };
  instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    sampleInt: 100,
    requests: [{ method: 'POST', path: PATH, setupRequest }],
  });
  const [result] = await once(instance, 'done');
  const eluAfter = await ask('elu');
  return {
    serverActiveMs: eluAfter.active - eluBefore.active,
    responses: result['2xx'] + result.non2xx,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    exhausted,
  };
}

function sum(runs) {
  const responses = runs.reduce((a, r) => a + r.responses, 0);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const serverActiveMs = runs.reduce((a, r) => a + r.serverActiveMs, 0);
  return {
    rps: responses / seconds,
    serverUsPerRequest: (serverActiveMs * 1000) / responses,
    responses,
    seconds,
    ok: runs.reduce((a, r) => a + r.ok, 0),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    exhausted: runs.some((r) => r.exhausted),
  };
}

/** @param {{ settings: { time: number, warmup: number }, log: (s: string) => void }} ctx */
export async function run({ settings, log }) {
  const { ops, ratio, table, verdict } = await import('./report.mjs');
  // Default settings (time 1000, warmup 250): 5 s measured per app after a 1 s warm-up.
  const measureS = Math.max(1, (5 * settings.time) / 1000);
  const warmupS = Math.max(0.5, (4 * settings.warmup) / 1000);
  const roundS = measureS / ROUNDS;

  log(`  RSA-${KEY_BITS} key, three Express apps in a worker thread…`);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: KEY_BITS });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' });
  const publicKeyPem = publicKey.export({ type: 'pkcs1', format: 'pem' });
  const servers = new Worker(new URL(import.meta.url), { workerData: { role: ROLE_SERVERS, publicKeyPem } });
  const [{ ports }] = await once(servers, 'message');
  const [adapterPort, handWrittenPort, barePort] = ports;
  const ask = async (msg) => {
    const reply = once(servers, 'message');
    servers.postMessage(msg);
    return (await reply)[0];
  };

  try {
    // The pool: each job_id goes to the adapter once. Topped up before each adapter run from the
    // fastest adapter or hand-written rate seen so far (the two are close), with a margin.
    let pool = [];
    let cursor = 0;
    const fresh = () => (cursor < pool.length ? pool[cursor++] : undefined);
    const cycling = () => {
      let i = 0;
      return () => pool[i++ % pool.length];
    };
    const rate = (r) => r.responses / r.seconds;
    let expected = 0;
    const topUp = async (seconds) => {
      const more = Math.ceil(expected * seconds * 1.5) + 4 * CONNECTIONS - (pool.length - cursor);
      if (more <= 0) return;
      log(`    signing ${more} events…`);
      pool = pool.concat(await signPool(privateKeyPem, more));
    };
    log(`  signing the first events (${availableParallelism()} workers)…`);
    pool = await signPool(privateKeyPem, 2 * CONNECTIONS);

    // Every app must answer 200 to a signed request, or it would measure a failure path.
    for (const [name, port] of [['hand-written', handWrittenPort], ['bare', barePort]]) {
      const res = await fetch(`http://127.0.0.1:${port}${PATH}`, { method: 'POST', ...pool[0] });
      if (res.status !== 200) throw new Error(`adapter-express: ${name} answered ${res.status} to a signed request`);
    }

    log(`  warm-up ${warmupS} s each…`);
    expected = rate(await load(handWrittenPort, warmupS, cycling(), undefined, ask));
    await load(barePort, warmupS, cycling(), undefined, ask);
    await topUp(2 * warmupS); // the warm-up rate above was cold: a wider margin
    const warm = await load(adapterPort, warmupS, fresh, pool[0], ask);
    expected = Math.max(expected, rate(warm));
    const warmDuplicates = (await ask('stats')).stats.duplicates;

    const runs = { adapter: [], handWritten: [], bare: [] };
    const order = ['adapter', 'handWritten', 'bare'];
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 === 0 ? order : [...order].reverse()) {
        log(`  round ${round + 1}/${ROUNDS}: ${name} ${roundS} s…`);
        if (name === 'adapter') {
          await topUp(roundS);
          const r = await load(adapterPort, roundS, fresh, pool[0], ask);
          runs.adapter.push(r);
          expected = Math.max(expected, rate(r));
        } else if (name === 'handWritten') {
          const r = await load(handWrittenPort, roundS, cycling(), undefined, ask);
          runs.handWritten.push(r);
          expected = Math.max(expected, rate(r));
        } else runs.bare.push(await load(barePort, roundS, cycling(), undefined, ask));
      }
    }
    const adapter = sum(runs.adapter);
    const handWritten = sum(runs.handWritten);
    const bare = sum(runs.bare);
    const { stats, handlerRuns, handWrittenFailures } = await ask('stats');

    const problems = [];
    if (adapter.exhausted) problems.push(`the job_id pool ran out: the adapter was measured for ${adapter.seconds.toFixed(1)} s only`);
    const duplicates = stats.duplicates - warmDuplicates;
    if (duplicates > 0) problems.push(`${duplicates} measured adapter requests were duplicates`);
    const rejected = Object.entries(stats.rejected);
    if (rejected.length > 0) problems.push(`adapter rejections: ${rejected.map(([c, n]) => `${c} ${n}`).join(', ')}`);
    for (const [name, r] of Object.entries({ adapter, handWritten, bare })) {
      if (r.non2xx > 0 || r.errors > 0) problems.push(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors/timeouts`);
    }
    if (handWrittenFailures > 0) problems.push(`hand-written: ${handWrittenFailures} failed verifications`);

    const value = adapter.rps / handWritten.rps;
    const cpuValue = handWritten.serverUsPerRequest / adapter.serverUsPerRequest;
    const row = (name, r) => [name, ops(r.rps), r.serverUsPerRequest.toFixed(0), r.p50.toFixed(1), r.p99.toFixed(1), ops(r.responses), r.seconds.toFixed(1)];
    const text = [
      table(
        [
          { header: 'app', align: 'left' },
          { header: 'req/s' },
          { header: 'server µs/req' },
          { header: 'p50 ms' },
          { header: 'p99 ms' },
          { header: 'requests' },
          { header: 's' },
        ],
        [row('(a) @jobhook/express', adapter), row('(b) hand-written verify', handWritten), row('(c) bare 200', bare)],
      ),
      '',
      table(
        [{ header: 'ratio', align: 'left' }, { header: 'value' }, { header: `≥${TARGET.toFixed(2)}×?` }],
        [
          ['adapter / hand-written', ratio(value), verdict(value, TARGET)],
          ['adapter / hand-written, by server busy time', ratio(cpuValue), '—'],
          ['adapter / bare', ratio(adapter.rps / bare.rps), '—'],
          ['hand-written / bare', ratio(handWritten.rps / bare.rps), '—'],
        ],
      ),
    ].join('\n');
    log('');
    log(text);
    log('');
    const notes = [
      ...NOTES,
      `body: ${pool[0].body.length} bytes (python json.dumps style). job_id pool: ${pool.length} signed, ${cursor} handed to the adapter; handler ran ${handlerRuns} times; receiver handled ${stats.handled}; duplicates: ${warmDuplicates} in the warm-up, ${duplicates} measured.`,
      ...problems.map((p) => `PROBLEM: ${p}`),
    ];
    for (const note of notes) log(`  ${note}`);
    return {
      text,
      notes,
      data: { serverRatio: cpuValue, connections: CONNECTIONS, keyBits: KEY_BITS, measureS, warmupS, rounds: ROUNDS, bodyBytes: pool[0].body.length, adapter, handWritten, bare, receiverStats: stats, runs },
      targets: [{ name: 'express adapter / hand-written verifying route (req/s)', value, min: TARGET, met: value >= TARGET && problems.length === 0 }],
    };
  } finally {
    await ask('close').catch(() => {});
    await servers.terminate();
  }
}

// ---------------------------------------------------------------- entry points

if (!isMainThread && workerData?.role === ROLE_SERVERS) {
  await serversMain(workerData);
} else if (!isMainThread && workerData?.role === ROLE_SIGNER) {
  await signerMain(workerData);
} else if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { DEFAULT_SETTINGS } = await import('./harness.mjs');
  const out = await run({ settings: DEFAULT_SETTINGS, log: (s) => console.log(s) });
  if (out.targets.some((t) => !t.met)) process.exitCode = 1;
}
