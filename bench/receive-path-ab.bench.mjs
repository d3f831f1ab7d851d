// Group `receive-path-ab`: one build of @jobhook/core against another, interleaved in one run, so a
// refactor's cost is read in one machine state: receiver.handle() on 4,000 distinct tagged 1 KB
// webhooks (memory store, recipientSecret, no-op handler), 32 and 1 in flight, tracing off and on,
// and verifier.verify() on the 1 KB webhook, RSA-2048 and RSA-3072.
//
// JOBHOOK_BENCH_BEFORE_DIST=/path/to/other/packages/core/dist is the build measured as "before"
// (required); "after" is the workspace's own build. Make the other build with
//   git worktree add /tmp/before <commit> && cd /tmp/before && npm ci && npx tsc -b packages/core
import { generateKeyPair } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { compareAsync } from './harness.mjs';
import { getPayload, pyDumps } from './payloads.mjs';
import { ratio, table } from './report.mjs';
import { perTurn, roundRatios, tracingOn } from './receive-path.bench.mjs';

export const description =
  'core after ÷ core before (JOBHOOK_BENCH_BEFORE_DIST), interleaved: receiver.handle() 32 and 1 in flight, tracing off/on, and the verifier, RSA-2048 and RSA-3072';
export const TARGET = 0.97;
const POOL = 4000;
const RECIPIENT_URL = 'https://hooks.example.com/jobs';
const RECIPIENT_SECRET = 'bench-recipient-secret-0123456789abcdef';

async function loadCore(dist) {
  const url = (path) => pathToFileURL(resolve(dist, path)).href;
  return {
    core: await import(url('index.js')),
    recipient: await import(url('recipient/index.js')),
    sign: await import(url('sign/index.js')),
  };
}

// The same measures as the receive-path group: its tracer, its per-round ratio, its one-per-turn pacing.
export async function run({ settings, log }) {
  const beforeDist = process.env.JOBHOOK_BENCH_BEFORE_DIST;
  if (beforeDist === undefined) {
    const text =
      'not run: set JOBHOOK_BENCH_BEFORE_DIST to the other build of packages/core/dist (see the head of bench/receive-path-ab.bench.mjs)';
    log(`  ${text}`);
    return { text, data: {} };
  }
  const before = await loadCore(beforeDist);
  const after = await loadCore(new URL('../packages/core/dist', import.meta.url).pathname);
  log(`  before: ${beforeDist}; after: workspace build`);
  const webhook = getPayload('webhook-1kb');
  const rows = [];
  const targets = [];
  for (const bits of [2048, 3072]) {
    const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: bits, publicExponent: 65537 });
    const pem = publicKey.export({ type: 'pkcs1', format: 'pem' });
    const now = Date.now();
    const pool = [];
    for (let i = 0; i < POOL; i++) {
      const tag = after.recipient.createRecipientTag({ secret: RECIPIENT_SECRET, webhookReceiver: RECIPIENT_URL, now: now - 60_000 });
      const value = {
        ...webhook.value,
        job_id: `${webhook.value.job_id.slice(0, 24)}${(0xa0000000000 + i).toString(16).padStart(12, '0')}`,
        user_parameters: { ...webhook.value.user_parameters, [tag.key]: tag.value },
      };
      const body = Buffer.from(pyDumps(value, 'python'), 'utf8');
      const signed = after.sign.signPayload(body, privateKey, { bodyStyle: 'python' });
      const headers = { 'content-type': 'application/json' };
      for (const [k, v] of Object.entries(signed.headers)) headers[k.toLowerCase()] = v;
      pool.push({ body, headers, signature: signed.signature });
    }
    for (const tracing of ['off', 'on']) {
      const tracingOptions = tracing === 'off' ? {} : await tracingOn();
      for (const inFlight of [32, 1]) {
        const handleOf = (build) => {
          let receiver;
          let h = POOL;
          return async () => {
            if (h === POOL) {
              h = 0;
              receiver = build.core.createReceiver({
                publicKeys: pem,
                store: build.core.createMemoryStore({ max: POOL * 2 }),
                recipientSecret: RECIPIENT_SECRET,
                recipientUrl: RECIPIENT_URL,
                onEvent: () => {},
                ...tracingOptions,
              });
            }
            const d = pool[h++];
            const res = await receiver.handle({ method: 'POST', headers: d.headers, rawBody: d.body });
            if (res.status !== 200) throw new Error(`receive-path-ab: ${res.status} ${res.body}`);
          };
        };
        const wrap = inFlight === 1 ? perTurn : (fn) => fn;
        log(`  RSA-${bits}, tracing ${tracing}, ${inFlight} in flight…`);
        const [b, a] = await compareAsync(
          [
            { name: 'before', fn: wrap(handleOf(before)), concurrency: inFlight },
            { name: 'after', fn: wrap(handleOf(after)), concurrency: inFlight },
          ],
          settings,
        );
        const r = roundRatios(a, b);
        rows.push([
          `handle RSA-${bits}`,
          tracing,
          String(inFlight),
          `${(b.nsPerOp / 1000).toFixed(1)}`,
          `${(a.nsPerOp / 1000).toFixed(1)}`,
          `${ratio(r.median)} (${r.p10.toFixed(2)}–${r.p90.toFixed(2)})`,
        ]);
        targets.push({
          name: `receive-path-ab handle RSA-${bits} tracing ${tracing} ${inFlight} in flight`,
          value: r.median,
          min: TARGET,
          met: r.median >= TARGET,
        });
      }
    }
    const verifierOf = (build) => {
      const verifier = build.core.createVerifier({ publicKeys: pem });
      let i = 0;
      return async () => {
        const d = pool[i++ % POOL];
        verifier.verify({ body: d.body, signature: d.signature });
      };
    };
    log(`  RSA-${bits}, verifier…`);
    const [b, a] = await compareAsync(
      [
        { name: 'before', fn: verifierOf(before), concurrency: 1 },
        { name: 'after', fn: verifierOf(after), concurrency: 1 },
      ],
      settings,
    );
    const r = roundRatios(a, b);
    rows.push([
      `verifier RSA-${bits}`,
      '—',
      '1',
      `${(b.nsPerOp / 1000).toFixed(1)}`,
      `${(a.nsPerOp / 1000).toFixed(1)}`,
      `${ratio(r.median)} (${r.p10.toFixed(2)}–${r.p90.toFixed(2)})`,
    ]);
    targets.push({ name: `receive-path-ab verifier RSA-${bits}`, value: r.median, min: TARGET, met: r.median >= TARGET });
  }
  const columns = [
    { header: 'path', align: 'left' },
    { header: 'tracing', align: 'left' },
    { header: 'in flight' },
    { header: 'before µs' },
    { header: 'after µs' },
    { header: 'after ÷ before (p10–p90)' },
  ];
  const text = table(columns, rows);
  log(text);
  return { text, data: { rows }, targets };
}
