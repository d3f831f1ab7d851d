// Group `adapter-fastify`: HTTP requests/s through Fastify on loopback (autocannon, 10 connections,
// ~1 KB webhook, RSA-3072, memory store) for
//   (a) adapter      app.register(jobhook, { receiver }): the whole pipeline, every job_id new;
//   (b) hand-written a Fastify route with a route-scoped buffer parser doing the naive recipe:
//                    JSON.parse, sorted-keys JSON.stringify(…, null, 2), sha256 hex, crypto.verify
//                    with a cached KeyObject;
//   (c) bare         the same route-scoped buffer parser and a route answering 200: Fastify's floor.
//   (d) diagnostic   the same raw-body route calling receiver.handle by hand: adapter / (d) is what the
//                    plugin itself costs.
// The apps run in one worker thread (one core), autocannon in the main thread (the other core).
// Measured in two rounds, a b c d then d c b a, so drift hits all alike.
//
//   node bench/adapter-fastify.bench.mjs            (alone; needs the build: npx tsc -b)
//   node --expose-gc bench/run.mjs adapter-fastify  (as a group, once listed in run.mjs)
import { constants, createHash, createPublicKey, generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

export const description =
  'HTTP req/s through Fastify (autocannon, 10 connections, 1 KB, RSA-3072): @jobhook/fastify vs a hand-written verifying route vs a bare 200 route';

/** Minimum adapter / hand-written ratio. */
export const TARGET = 0.9;
const CONNECTIONS = 10;
const KEY_BITS = 3072;
const PATH = '/webhooks/jobs';
const ROUNDS = 2;
const ROLE_SERVERS = 'adapter-fastify:servers';
const ROLE_SIGNER = 'adapter-fastify:signer';

export const NOTES = [
  'adapter      = app.register(jobhook, { receiver }) with createReceiver({ publicKeys, store: createMemoryStore(), onEvent }): route-scoped raw-body parser, content type, signature, lossless parse, python canonical form, sha256, RSA verify, payload check, claim, handler (empty), complete, JSON answer. Every request carries a job_id never sent before (a pre-signed pool, sized from the warm-up rate; the run stops if it runs out).',
  "hand-written = the naive recipe in an encapsulated context of the same Fastify version: addContentTypeParser('*', { parseAs: 'buffer' }), JSON.parse, sorted-keys JSON.stringify(v, null, 2), sha256 hex, crypto.verify with a cached KeyObject, 200. Not exact (1.0 becomes 1, no dedupe, no checks), but the speed to match: the payload is chosen so its JavaScript and Python canonical forms agree, so it verifies.",
  "bare         = the same route-scoped buffer parser and a handler answering 200 {\"ok\":true}: Fastify routing, body read and Node HTTP only.",
  'receiver.handle in a route = a diagnostic: the same raw-body route as (c) calling receiver.handle and writing its answer, own memory store, same fresh job_ids. adapter / this = the cost of the plugin itself (≈ 1.00×); the rest of the gap to (b) is the pipeline in core.',
  `autocannon in the main thread, ${CONNECTIONS} connections, keep-alive, no pipelining; the four apps in one worker thread. Each app: a warm-up, then ${ROUNDS} rounds (a b c d, d c b a) summed; req/s = answers / seconds.`,
];

// ---------------------------------------------------------------- payload and signing

/** A ~1 KB OCR event whose JSON.stringify(sorted, null, 2) form equals the python canonical form. */
function buildEvent() {
  return {
    event: 'async_job_completed',
    job_id: randomUUID(),
    status: 'success',
    feature: 'ocr',
    subfeature: 'ocr_async',
    provider: 'amazon',
    model: null,
    created_at: '2026-11-22T09:30:00.123456+00:00',
    finished_at: '2026-11-22T09:30:02.654321+00:00',
    output: {
      raw_text: 'FACTURE n° 2026-0042\nLivraison: 12 rue des Lilas, Lyon\nTotal TTC: 184,20 EUR\nMerci de votre confiance.',
      pages: 1,
      confidence: 0.9731,
      lines: [
        { text: 'FACTURE n° 2026-0042', confidence: 0.9912, bounding_box: { left: 0.1023, top: 0.0811, width: 0.4127, height: 0.0313 } },
        { text: 'Livraison: 12 rue des Lilas, Lyon', confidence: 0.9687, bounding_box: { left: 0.1019, top: 0.1422, width: 0.5531, height: 0.0291 } },
        { text: 'Total TTC: 184,20 EUR', confidence: 0.9543, bounding_box: { left: 0.1031, top: 0.7719, width: 0.3876, height: 0.0302 } },
      ],
    },
    user_parameters: { language: 'fr', request_id: 'req-2026-11-22-0042' },
  };
}

/** Worker: signs `count` fresh events with the PKCS#8 PEM key; posts `[{ body, signature }]`. */
async function signerMain({ privateKeyPem, count }) {
  const { loadPrivateKey, signPayload } = await import('@jobhook/core');
  const key = loadPrivateKey(privateKeyPem);
  const out = [];
  for (let i = 0; i < count; i++) {
    const { body, signature } = signPayload(buildEvent(), key);
    out.push({ body, signature });
  }
  parentPort.postMessage(out);
}

/** Signs `count` fresh events on every core; returns autocannon request parts. */
async function signPool(privateKeyPem, count) {
  const threads = Math.max(1, availableParallelism());
  const share = Math.ceil(count / threads);
  const parts = await Promise.all(
    Array.from({ length: threads }, async (_, t) => {
      const n = Math.max(0, Math.min(share, count - t * share));
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
      'x-service-webhook': 'true',
    },
  }));
}

// ---------------------------------------------------------------- the three Fastify apps (worker)

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key]);
    return out;
  }
  return value;
}

/** An app whose PATH route gets the body as a Buffer from a route-scoped parser, as the plugin does. */
function rawBodyApp(Fastify, handler) {
  const app = Fastify();
  app.register(async (scoped) => {
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scoped.post(PATH, handler);
  });
  return app;
}

async function serversMain({ publicKeyPem }) {
  const { default: Fastify } = await import('fastify');
  const { createMemoryStore, createReceiver } = await import('@jobhook/core');
  const { jobhook } = await import('@jobhook/fastify');
  const JSON_TYPE = 'application/json; charset=utf-8';
  let handlerRuns = 0;
  const newReceiver = () =>
    createReceiver({ publicKeys: publicKeyPem, store: createMemoryStore({ max: 1_000_000 }), onEvent: () => void handlerRuns++ });

  const receiver = newReceiver();
  const adapter = Fastify();
  adapter.register(jobhook, { path: PATH, receiver });

  const key = createPublicKey(publicKeyPem);
  let handWrittenFailures = 0;
  const handWritten = rawBodyApp(Fastify, async (request, reply) => {
    try {
      const canonical = JSON.stringify(sortKeys(JSON.parse(request.body.toString('utf8'))), null, 2);
      const digest = createHash('sha256').update(canonical).digest('hex');
      const signature = Buffer.from(String(request.headers['x-service-signature']), 'hex');
      if (verify('sha256', Buffer.from(digest), { key, padding: constants.RSA_PKCS1_PADDING }, signature)) {
        return reply.code(200).type(JSON_TYPE).send('{"ok":true}');
      }
      handWrittenFailures++;
      return reply.code(401).type(JSON_TYPE).send('{"error":"signature"}');
    } catch {
      handWrittenFailures++;
      return reply.code(400).type(JSON_TYPE).send('{"error":"body"}');
    }
  });

  const bare = rawBodyApp(Fastify, async (_request, reply) => reply.code(200).type(JSON_TYPE).send('{"ok":true}'));

  // Diagnostic: the pipeline called by hand from the same raw-body route, its own store (so the
  // pool's job_ids are new to it too). adapter / direct = what the plugin itself costs.
  const directReceiver = newReceiver();
  const direct = rawBodyApp(Fastify, async (request, reply) => {
    const answer = await directReceiver.handle({ method: request.method, headers: request.headers, rawBody: request.body });
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });

  const apps = [adapter, handWritten, bare, direct];
  await Promise.all(apps.map((app) => app.listen({ port: 0, host: '127.0.0.1' })));
  parentPort.on('message', async (msg) => {
    if (msg === 'stats') parentPort.postMessage({ stats: receiver.stats(), directStats: directReceiver.stats(), handlerRuns, handWrittenFailures });
    if (msg === 'close') {
      await Promise.all(apps.map((app) => app.close()));
      parentPort.postMessage('closed');
    }
  });
  parentPort.postMessage({ ports: apps.map((app) => app.server.address().port) });
}

// ---------------------------------------------------------------- measuring (main thread)

/**
 * One autocannon run of `seconds` against `port`, each request from `next()` (undefined when it has
 * none left: the run then stops early).
 */
async function load(port, seconds, next) {
  let instance;
  let last;
  let exhausted = false;
  const setupRequest = (req) => {
    const parts = next();
    if (parts === undefined) {
      if (!exhausted) (instance ? instance.stop() : setImmediate(() => instance.stop()));
      exhausted = true;
      return { ...req, ...last };
    }
    last = parts;
    return { ...req, ...parts };
  };
  instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST', path: PATH, setupRequest }],
  });
  const [result] = await once(instance, 'done');
  return {
    responses: result['2xx'] + result.non2xx,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: (result.finish - result.start) / 1000,
    p50: result.latency.p50,
    p99: result.latency.p99,
    exhausted,
  };
}

function sum(runs) {
  const responses = runs.reduce((a, r) => a + r.responses, 0);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  return {
    rps: responses / seconds,
    responses,
    seconds,
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
  // Default settings (time 1000, warmup 250): 2 rounds of 3 s (autocannon counts whole seconds)
  // per app after a 1 s warm-up.
  const roundS = Math.max(1, Math.round((5 * settings.time) / 1000 / ROUNDS));
  const warmupS = Math.max(1, Math.round((4 * settings.warmup) / 1000));

  log(`  RSA-${KEY_BITS} key, four Fastify apps in a worker thread…`);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: KEY_BITS });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' });
  const publicKeyPem = publicKey.export({ type: 'pkcs1', format: 'pem' });
  const servers = new Worker(new URL(import.meta.url), { workerData: { role: ROLE_SERVERS, publicKeyPem } });
  const [{ ports }] = await once(servers, 'message');
  const port = { adapter: ports[0], handWritten: ports[1], bare: ports[2], direct: ports[3] };
  const ask = async (msg) => {
    const reply = once(servers, 'message');
    servers.postMessage(msg);
    return (await reply)[0];
  };

  try {
    // The pool: each job_id goes once to the adapter and once to the direct route (each has its
    // own store); the hand-written and bare routes cycle through it.
    let pool = [];
    const cursor = { adapter: 0, direct: 0 };
    const fresh = (name) => () => (cursor[name] < pool.length ? pool[cursor[name]++] : undefined);
    const cycling = () => {
      let i = 0;
      return () => pool[i++ % pool.length];
    };
    const next = { adapter: fresh('adapter'), direct: fresh('direct'), handWritten: cycling(), bare: cycling() };
    const initial = 6_000 * warmupS;
    log(`  signing ${initial} events (${availableParallelism()} threads)…`);
    const t0 = performance.now();
    pool = await signPool(privateKeyPem, initial);
    const signRate = initial / ((performance.now() - t0) / 1000);
    log(`  signed at ${ops(signRate)}/s`);

    // Every app must answer 200 to a signed request, or it would measure a failure path.
    for (const name of ['handWritten', 'bare']) {
      const res = await fetch(`http://127.0.0.1:${port[name]}${PATH}`, { method: 'POST', ...pool[pool.length - 1] });
      if (res.status !== 200) throw new Error(`adapter-fastify: ${name} answered ${res.status} to a signed request`);
    }

    log(`  warm-up ${warmupS} s each…`);
    const warm = {};
    for (const name of ['adapter', 'handWritten', 'bare', 'direct']) warm[name] = await load(port[name], warmupS, next[name]);
    // Before each pool-consuming run: enough fresh jobs at the fastest rate seen so far (a cold
    // warm-up underestimates it; the hand-written rate is the target), with margin. Signing
    // happens between runs, while the servers are idle.
    let rate = Math.max(...['adapter', 'handWritten', 'direct'].map((name) => warm[name].responses / warm[name].seconds));
    const topUp = async (name) => {
      const needed = Math.ceil(rate * roundS * 1.5) + 4 * CONNECTIONS;
      if (pool.length - cursor[name] >= needed) return;
      const more = needed - (pool.length - cursor[name]);
      log(`  signing ${more} more events (at ${ops(rate)} req/s; ~${Math.ceil(more / signRate)} s)…`);
      pool = pool.concat(await signPool(privateKeyPem, more));
    };

    const runs = { adapter: [], handWritten: [], bare: [], direct: [] };
    const order = ['adapter', 'handWritten', 'bare', 'direct'];
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 === 0 ? order : [...order].reverse()) {
        log(`  round ${round + 1}/${ROUNDS}: ${name} ${roundS} s…`);
        if (name in cursor) await topUp(name);
        const result = await load(port[name], roundS, next[name]);
        runs[name].push(result);
        if (name in cursor) rate = Math.max(rate, result.responses / result.seconds);
      }
    }
    const r = Object.fromEntries(order.map((name) => [name, sum(runs[name])]));
    const { stats, directStats, handlerRuns, handWrittenFailures } = await ask('stats');

    const problems = [];
    for (const [name, s] of [['adapter', stats], ['direct', directStats]]) {
      if (r[name].exhausted) problems.push(`${name}: the job_id pool ran out (measured ${r[name].seconds.toFixed(1)} s)`);
      if (s.duplicates > 0) problems.push(`${name}: ${s.duplicates} requests were duplicates`);
      const rejected = Object.entries(s.rejected);
      if (rejected.length > 0) problems.push(`${name} rejections: ${rejected.map(([c, n]) => `${c} ${n}`).join(', ')}`);
    }
    for (const name of order) {
      if (r[name].non2xx > 0 || r[name].errors > 0) problems.push(`${name}: ${r[name].non2xx} non-2xx answers, ${r[name].errors} errors/timeouts`);
    }
    if (handWrittenFailures > 0) problems.push(`hand-written: ${handWrittenFailures} failed verifications`);

    const value = r.adapter.rps / r.handWritten.rps;
    const row = (label, x) => [label, ops(x.rps), x.p50.toFixed(1), x.p99.toFixed(1), ops(x.responses), x.seconds.toFixed(1)];
    const text = [
      table(
        [
          { header: 'app', align: 'left' },
          { header: 'req/s' },
          { header: 'p50 ms' },
          { header: 'p99 ms' },
          { header: 'requests' },
          { header: 's' },
        ],
        [
          row('(a) @jobhook/fastify', r.adapter),
          row('(b) hand-written verify', r.handWritten),
          row('(c) bare 200', r.bare),
          row('(d) receiver.handle in a route', r.direct),
        ],
      ),
      '',
      table(
        [{ header: 'ratio', align: 'left' }, { header: 'value' }, { header: `≥${TARGET.toFixed(2)}×?` }],
        [
          ['adapter / hand-written', ratio(value), verdict(value, TARGET)],
          ['adapter / bare', ratio(r.adapter.rps / r.bare.rps), '—'],
          ['hand-written / bare', ratio(r.handWritten.rps / r.bare.rps), '—'],
          ['adapter / receiver.handle in a route', ratio(r.adapter.rps / r.direct.rps), '—'],
        ],
      ),
    ].join('\n');
    log('');
    log(text);
    log('');
    const notes = [
      ...NOTES,
      `job_id pool: ${pool.length} signed (${pool[0].body.length} B bodies), ${cursor.adapter} handed to the adapter, ${cursor.direct} to the direct route; handlers ran ${handlerRuns} times; adapter receiver handled ${stats.handled}, duplicates ${stats.duplicates}.`,
      ...problems.map((p) => `PROBLEM: ${p}`),
    ];
    for (const note of notes) log(`  ${note}`);
    return {
      text,
      notes,
      data: { connections: CONNECTIONS, keyBits: KEY_BITS, roundS, warmupS, rounds: ROUNDS, bodyBytes: pool[0].body.length, ...r, receiverStats: stats, runs },
      targets: [{ name: 'fastify adapter / hand-written verifying route (req/s)', value, min: TARGET, met: value >= TARGET && problems.length === 0 }],
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
  console.log(`## adapter-fastify — ${description}\n`);
  const out = await run({ settings: DEFAULT_SETTINGS, log: (s) => console.log(s) });
  if (out.targets.some((t) => !t.met)) process.exitCode = 1;
}
