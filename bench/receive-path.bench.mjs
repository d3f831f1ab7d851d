// Group `receive-path`: the receive path against the verify a user writes by hand (JSON.parse, keys
// sorted deep, JSON.stringify(v, null, 2), sha256, crypto.verify with a cached key), on payloads
// like real ones, RSA-2048 and RSA-3072, median and spread of interleaved rounds:
// - receiver.handle() on 4,000 distinct signed 1 KB webhooks, each with a recipient tag checked by
//   the receiver (recipientSecret), 32 in flight and 1 in flight (one request per event-loop turn:
//   each call starts from setImmediate, as a server's requests start from I/O callbacks), tracing
//   off and on;
// - verifier.verify() alone on the 1 KB webhook and on a python-style 100 KB chat body (~12.5k
//   \uXXXX escapes);
// - per-phase costs (RSA, the canonical candidates, the payload, the shape check) in the same rows.
//
// JOBHOOK_BENCH_CORE_DIST=/path/to/packages/core/dist measures another build of @jobhook/core (for
// before/after figures in one machine state); by default the workspace's own.
import { constants, createHash, generateKeyPair, sign, verify } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { compareAsync } from './harness.mjs';
import { naiveCanonical } from './naive-recipe.mjs';
import { getPayload, pyDumps } from './payloads.mjs';
import { logResult, ops, ratio, table } from './report.mjs';

export const description =
  'receiver.handle() (recipient tag, 4,000 distinct 1 KB webhooks, 32 and 1 in flight, tracing off/on) and the verifier (1 KB, 100 KB chat) vs the naive verify, RSA-2048 and RSA-3072, with per-phase costs';

export const TARGET_HANDLE = 0.9;
export const TARGET_VERIFIER = 1.0;
const KEY_SIZES = [2048, 3072];
const POOL = 4000;
const IN_FLIGHT = [32, 1];
const PADDING = constants.RSA_PKCS1_PADDING;
const RECIPIENT_URL = 'https://hooks.example.com/jobs';
const RECIPIENT_SECRET = 'bench-recipient-secret-0123456789abcdef';

/**
 * The receiver options that turn tracing on: a real OpenTelemetry SDK tracer (sampling every span)
 * whose batch processor hands the spans to an exporter that drops them, i.e. what an application
 * exporting to a collector pays in its own process, without the network.
 */
export async function tracingOn() {
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const dropping = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} };
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 65_536, maxExportBatchSize: 4096, scheduledDelayMillis: 50 })],
  });
  return { tracer: provider.getTracer('jobhook-bench') };
}

const coreDist = process.env.JOBHOOK_BENCH_CORE_DIST;
const coreUrl = (path) => pathToFileURL(resolve(coreDist ?? new URL('../packages/core/dist', import.meta.url).pathname, path)).href;

export const NOTES = [
  'naive = JSON.parse(body.toString("utf8")), keys sorted deep (objects rebuilt from Object.keys(o).sort()), JSON.stringify(v, null, 2), sha256 hex, crypto.verify("sha256", hex, { key: cachedKeyObject, padding: PKCS#1 v1.5 }, signature hex-decoded): the verify a user writes (not exact: 1.0 → 1; no dedupe, no checks). Its signatures are made over the digest it computes.',
  `handle = receiver.handle({ method: "POST", headers, rawBody }), memory store, no-op handler, recipientSecret and recipientUrl set (every body carries a valid tag, checked and removed), ${POOL.toLocaleString('en')} distinct deliveries cycled (the store replaced when the pool wraps), each answered 200 handled.`,
  "tracing on = the receiver's tracer option set to an @opentelemetry/sdk-trace-base tracer (every span sampled) whose BatchSpanProcessor feeds an exporter that drops the spans: the in-process cost of traces exported to a collector, without the network. Naive has no traces.",
  'in flight 1 = one call at a time, each started from setImmediate (one request per event-loop turn), both sides; 32 = 32 calls pending.',
  'ratio = ours ops/s ÷ naive ops/s: the median of per-round ratios (each round times one batch of every task of the row, in rotating order), with p10–p90 of those ratios as the spread.',
  'phases (µs per call, median of batches in the same interleaved row): rsa = the RSA public operation alone (publicDecrypt of the signature, what the precheck does; naive: crypto.verify over a fixed digest); canonical = the candidate search once the signature is decoded (verifyRecovered with nativeFirst forced on: the native candidate, or off: the exact parse + candidate digests + payload; the receiver and the verifier choose by default, nativeFirstPays: the exact path for the 1 KB webhook, native first for the chat body); shape check = validateEvent after the forced native candidate; naive canonical = JSON.parse + sorted copy + JSON.stringify + sha256.',
  `chat-100kb: ${'a python-style body (json.dumps defaults, ensure_ascii) of a long multilingual chat completion'}.`,
];

function quantile(sorted, q) {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** Per-round ratios (base ns ÷ ours ns = ours ops/s ÷ base ops/s): median and p10–p90. */
export function roundRatios(ours, base) {
  const n = Math.min(ours.sampleNs.length, base.sampleNs.length);
  const r = [];
  for (let i = 0; i < n; i++) r.push(base.sampleNs[i] / ours.sampleNs[i]);
  r.sort((a, b) => a - b);
  return { median: quantile(r, 0.5), p10: quantile(r, 0.1), p90: quantile(r, 0.9), rounds: n };
}

const spread = (x) => `${ratio(x.median)} (${x.p10.toFixed(2)}–${x.p90.toFixed(2)})`;
const us = (task) => (task.nsPerOp / 1000).toFixed(1);

function naiveDigest(body) {
  return createHash('sha256').update(naiveCanonical(body)).digest('hex');
}

function naiveVerify(body, signatureHex, key) {
  return verify('sha256', Buffer.from(naiveDigest(body)), { key, padding: PADDING }, Buffer.from(signatureHex, 'hex'));
}

function rsaSignHex(privateKey, digestHex) {
  return sign('sha256', Buffer.from(digestHex, 'latin1'), { key: privateKey, padding: PADDING }).toString('hex');
}

/** A task run from setImmediate at 1 in flight (one request per event-loop turn). */
export const perTurn = (fn) => () => new Promise((done, fail) => setImmediate(() => fn().then(done, fail)));

export async function run({ compare, settings, log }) {
  const core = await import(coreUrl('index.js'));
  const { createRecipientTag } = await import(coreUrl('recipient/index.js'));
  const { signPayload } = await import(coreUrl('sign/index.js'));
  const { recoverSignature } = await import(coreUrl('signature/recover-digest.js'));
  const { verifyRecovered } = await import(coreUrl('signature/verifier.js'));
  const { CANONICAL_PROFILES } = await import(coreUrl('canonical/profiles.js'));
  const { createMemoryStore, createReceiver, createVerifier, validateEvent } = core;
  log(`  core: ${coreDist ?? 'workspace build'}`);

  const webhook = getPayload('webhook-1kb');
  const chat = getPayload('chat-100kb');
  const rows = [];
  const verifierRows = [];
  const phaseRows = [];
  const targets = [];

  for (const bits of KEY_SIZES) {
    log(`  RSA-${bits}: key, ${POOL.toLocaleString('en')} tagged deliveries…`);
    const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: bits, publicExponent: 65537 });
    const pem = publicKey.export({ type: 'pkcs1', format: 'pem' });
    const keyRing = createVerifier({ publicKeys: pem }).keyRing;
    const now = Date.now();
    const pool = [];
    for (let i = 0; i < POOL; i++) {
      const tag = createRecipientTag({ secret: RECIPIENT_SECRET, webhookReceiver: RECIPIENT_URL, now: now - 60_000 });
      const value = {
        ...webhook.value,
        job_id: `${webhook.value.job_id.slice(0, 24)}${(0xa0000000000 + i).toString(16).padStart(12, '0')}`,
        user_parameters: { ...webhook.value.user_parameters, [tag.key]: tag.value },
      };
      const body = Buffer.from(pyDumps(value, 'python'), 'utf8');
      const signed = signPayload(body, privateKey, { bodyStyle: 'python' });
      const headers = { 'content-type': 'application/json' };
      for (const [k, v] of Object.entries(signed.headers)) headers[k.toLowerCase()] = v;
      const nd = naiveDigest(body);
      pool.push({
        body,
        headers,
        signature: signed.signature,
        signatureBytes: Buffer.from(signed.signature, 'hex'),
        naiveSignature: nd === signed.digest ? signed.signature : rsaSignHex(privateKey, nd),
      });
    }
    const bytes = pool[0].body.length;

    for (const tracing of ['off', 'on']) {
      const tracingOptions = tracing === 'off' ? {} : await tracingOn();
      for (const inFlight of IN_FLIGHT) {
        let receiver;
        const fresh = () => {
          receiver = createReceiver({
            publicKeys: pem,
            store: createMemoryStore({ max: POOL * 2 }),
            recipientSecret: RECIPIENT_SECRET,
            recipientUrl: RECIPIENT_URL,
            onEvent: () => {},
            ...tracingOptions,
          });
        };
        fresh();
        let h = 0;
        let n = 0;
        const handle = async () => {
          if (h === POOL) {
            h = 0;
            fresh();
          }
          const d = pool[h++];
          const res = await receiver.handle({ method: 'POST', headers: d.headers, rawBody: d.body });
          if (res.status !== 200 || res.outcome.kind !== 'handled') throw new Error(`receive-path handle: ${res.status} ${res.body}`);
        };
        const naive = async () => {
          const d = pool[n++ % POOL];
          if (!naiveVerify(d.body, d.naiveSignature, publicKey)) throw new Error('receive-path: naive did not verify');
        };
        const wrap = inFlight === 1 ? perTurn : (fn) => fn;
        log(`  RSA-${bits}, tracing ${tracing}, ${inFlight} in flight: handle vs naive…`);
        const [base, ours] = await compareAsync(
          [
            { name: 'naive', fn: wrap(naive), concurrency: inFlight },
            { name: 'handle', fn: wrap(handle), concurrency: inFlight },
          ],
          settings,
        );
        const r = roundRatios(ours, base);
        rows.push({ bits, tracing, inFlight, bytes, base, ours, ratio: r });
        targets.push({
          name: `receive-path handle/naive RSA-${bits} tracing ${tracing} ${inFlight} in flight`,
          value: r.median,
          min: TARGET_HANDLE,
          met: r.median >= TARGET_HANDLE,
        });
      }
    }

    // The verifier alone, back to back (sync): 1 KB webhook and the 100 KB chat body.
    const verifier = createVerifier({ publicKeys: pem, maxBodyBytes: 16 * 2 ** 20 });
    const chatSigned = signPayload(chat.bodies.python, privateKey, { bodyStyle: 'python' });
    const chatNd = naiveDigest(chatSigned.body);
    const chatCase = {
      body: chatSigned.body,
      signature: chatSigned.signature,
      naiveSignature: chatNd === chatSigned.digest ? chatSigned.signature : rsaSignHex(privateKey, chatNd),
    };
    for (const [name, d] of [
      ['webhook-1kb (tagged)', pool[0]],
      ['chat-100kb', chatCase],
    ]) {
      if (verifier.verify({ body: d.body, signature: d.signature }).profile !== 'python') throw new Error(`${name}: not python`);
      log(`  RSA-${bits}: verifier vs naive, ${name}…`);
      const [base, ours] = compare(
        [
          { name: 'naive', fn: () => naiveVerify(d.body, d.naiveSignature, publicKey) },
          { name: 'verifier', fn: () => verifier.verify({ body: d.body, signature: d.signature }) },
        ],
        settings,
      );
      const r = roundRatios(ours, base);
      verifierRows.push({ bits, name, bytes: d.body.length, base, ours, ratio: r });
      targets.push({
        name: `receive-path verifier/naive RSA-${bits} ${name}`,
        value: r.median,
        min: TARGET_VERIFIER,
        met: r.median >= TARGET_VERIFIER,
      });
    }

    // Per-phase costs, in one interleaved row per in-flight setting.
    const recovered = pool.map((d) => recoverSignature(d.signatureBytes, keyRing));
    const exactRun = { maxBodyBytes: 1 << 20, maxDepth: 512, maxCanonicalBytes: 16 << 20, scratch: true, nativeFirst: false };
    const nativeRun = { ...exactRun, nativeFirst: true };
    const fixedDigest = Buffer.from(naiveDigest(pool[0].body));
    const fixedSig = Buffer.from(pool[0].naiveSignature, 'hex');
    for (const inFlight of IN_FLIGHT) {
      const cyc = () => {
        let i = 0;
        return () => i++ % POOL;
      };
      const steps = [
        ['naive: rsa (crypto.verify)', () => verify('sha256', fixedDigest, { key: publicKey, padding: PADDING }, fixedSig)],
        ['naive: canonical + sha256', (i) => naiveDigest(pool[i].body)],
        ['ours: rsa (recover)', (i) => recoverSignature(pool[i].signatureBytes, keyRing)],
        ['ours: canonical, exact path', (i) => verifyRecovered(pool[i].body, recovered[i], CANONICAL_PROFILES, exactRun, 'string')],
        ['ours: canonical, native first', (i) => verifyRecovered(pool[i].body, recovered[i], CANONICAL_PROFILES, nativeRun, 'string')],
        [
          'ours: shape check (validateEvent)',
          (i) => validateEvent(verifyRecovered(pool[i].body, recovered[i], CANONICAL_PROFILES, nativeRun, 'string').payload),
        ],
      ];
      const wrap = inFlight === 1 ? perTurn : (fn) => fn;
      const tasks = steps.map(([name, step]) => {
        const next = cyc();
        return { name, fn: wrap(async () => step(next())), concurrency: inFlight };
      });
      log(`  RSA-${bits}: phases, ${inFlight} in flight…`);
      const results = await compareAsync(tasks, settings);
      phaseRows.push({ bits, inFlight, results });
    }
  }

  const text = [
    table(
      [
        { header: 'RSA', align: 'left' },
        { header: 'tracing', align: 'left' },
        { header: 'in flight' },
        { header: 'naive ops/s' },
        { header: 'handle ops/s' },
        { header: 'handle/naive (p10–p90)' },
        { header: `≥${TARGET_HANDLE.toFixed(2)}×?` },
      ],
      rows.map((r) => [
        r.bits,
        r.tracing,
        r.inFlight,
        ops(r.base.opsPerSec),
        ops(r.ours.opsPerSec),
        spread(r.ratio),
        r.ratio.median >= TARGET_HANDLE ? 'met' : 'MISSED',
      ]),
    ),
    '',
    table(
      [
        { header: 'RSA', align: 'left' },
        { header: 'body', align: 'left' },
        { header: 'bytes' },
        { header: 'naive ops/s' },
        { header: 'verifier ops/s' },
        { header: 'verifier/naive (p10–p90)' },
        { header: `≥${TARGET_VERIFIER.toFixed(2)}×?` },
      ],
      verifierRows.map((r) => [
        r.bits,
        r.name,
        r.bytes.toLocaleString('en'),
        ops(r.base.opsPerSec),
        ops(r.ours.opsPerSec),
        spread(r.ratio),
        r.ratio.median >= TARGET_VERIFIER ? 'met' : 'MISSED',
      ]),
    ),
    '',
    table(
      [{ header: 'RSA', align: 'left' }, { header: 'in flight' }, ...phaseRows[0].results.map((t) => ({ header: `${t.name} µs` }))],
      phaseRows.map((r) => [r.bits, r.inFlight, ...r.results.map(us)]),
    ),
  ].join('\n');
  logResult(log, text, NOTES);
  const strip = (t) => (t ? { ...t, sampleNs: undefined } : t);
  return {
    text,
    notes: NOTES,
    data: {
      core: coreDist ?? 'workspace',
      rows: rows.map((r) => ({ ...r, base: strip(r.base), ours: strip(r.ours) })),
      verifierRows: verifierRows.map((r) => ({ ...r, base: strip(r.base), ours: strip(r.ours) })),
      phaseRows: phaseRows.map((r) => ({ ...r, results: r.results.map(strip) })),
    },
    targets,
  };
}
