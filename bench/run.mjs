// Benchmark runner. `npm run bench` builds, then runs every group:
//
//   node --expose-gc bench/run.mjs                   all groups
//   node --expose-gc bench/run.mjs canonicalize      one group (several names allowed)
//   node --expose-gc bench/run.mjs availability      an opt-in group (OPT_IN: never in a bare run; AVAIL_* env)
//   options: --time=MS (timed per task, default 1000)  --warmup=MS (default 250)
//            --quick (time 150, warmup 50: a smoke run)  --strict (exit 1 when a target is missed)
//            --out=FILE (default bench/results/latest.json)  --list
//
// Adding a group: write bench/<name>.bench.mjs exporting
//   description: string
//   run(ctx): Promise<{ text, notes?, data, targets? }>
//     ctx = { compare, settings, log, payloads }  (compare: see harness.mjs; log prints a line)
//     targets: [{ name, value, min, met }]
// and add one line to GROUPS below.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SETTINGS, compare, hasGc } from './harness.mjs';
import { getPayloads } from './payloads.mjs';
import { codeVersion, machine } from './report.mjs';

/** The groups, in run order: name → module loader. */
const GROUPS = {
  canonicalize: () => import('./canonicalize.bench.mjs'),
  verify: () => import('./verify.bench.mjs'),
  'verify-path': () => import('./verify-path.bench.mjs'),
  'receive-path': () => import('./receive-path.bench.mjs'),
  'receive-path-ab': () => import('./receive-path-ab.bench.mjs'),
  stores: () => import('./stores.bench.mjs'),
  receiver: () => import('./receiver.bench.mjs'),
  'receiver-stores': () => import('./receiver-stores.bench.mjs'),
  'tag-binding': () => import('./tag-binding.bench.mjs'),
  attack: () => import('./attack.bench.mjs'),
  'adapter-express': () => import('./adapter-express.bench.mjs'),
  'adapter-koa': () => import('./adapter-koa.bench.mjs'),
  'adapter-fastify': () => import('./adapter-fastify.bench.mjs'),
  sender: () => import('./sender.bench.mjs'),
  'poll-answer': () => import('./poll-answer.bench.mjs'),
  availability: () => import('./availability.bench.mjs'),
};
/** Groups run only when named (minutes long): `node --expose-gc bench/run.mjs availability`. */
const OPT_IN = new Set(['availability']);

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const opts = { groups: [], settings: { ...DEFAULT_SETTINGS }, strict: false, out: resolve(here, 'results/latest.json'), list: false };
  for (const arg of argv) {
    const [flag, value] = arg.split('=', 2);
    if (flag === '--time') opts.settings.time = Number(value);
    else if (flag === '--warmup') opts.settings.warmup = Number(value);
    else if (flag === '--quick') Object.assign(opts.settings, { time: 150, warmup: 50, minSamples: 5 });
    else if (flag === '--strict') opts.strict = true;
    else if (flag === '--out') opts.out = resolve(value);
    else if (flag === '--list') opts.list = true;
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else opts.groups.push(arg);
  }
  for (const key of ['time', 'warmup']) {
    if (!(opts.settings[key] >= 0)) throw new Error(`--${key} must be a number of milliseconds`);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.list) {
    for (const [name, load] of Object.entries(GROUPS))
      console.log(`${name.padEnd(14)} ${(await load()).description}${OPT_IN.has(name) ? ' (only when named)' : ''}`);
    return;
  }
  const names = opts.groups.length > 0 ? opts.groups : Object.keys(GROUPS).filter((n) => !OPT_IN.has(n));
  const unknown = names.filter((n) => !(n in GROUPS));
  if (unknown.length > 0) {
    console.error(`unknown group(s): ${unknown.join(', ')}; groups: ${Object.keys(GROUPS).join(', ')}`);
    process.exitCode = 2;
    return;
  }

  const info = machine();
  const code = codeVersion();
  const started = new Date();
  console.log(`jobhook benchmarks — ${started.toISOString()}`);
  console.log(`${info.cores} cores, ${info.cpuModel}, Node ${info.node} (V8 ${info.v8}, OpenSSL ${info.openssl}), ${info.platform}`);
  console.log(`code: commit ${code.commit}, @jobhook/core dist ${code.coreDist}`);
  console.log(
    `per task: ${opts.settings.warmup} ms warm-up, ≥${opts.settings.time} ms timed in ~${opts.settings.batchMs} ms batches (≥${opts.settings.minSamples}), tasks of a row interleaved; gc() between rows: ${hasGc ? 'yes' : 'NO (run with node --expose-gc)'}`,
  );
  const t0 = performance.now();
  const payloads = getPayloads();

  const results = {};
  const targets = [];
  for (const name of names) {
    const group = await GROUPS[name]();
    console.log(`\n## ${name} — ${group.description}\n`);
    const g0 = performance.now();
    const out = await group.run({ compare, settings: opts.settings, log: (s) => console.log(s), payloads });
    const seconds = (performance.now() - g0) / 1000;
    results[name] = { description: group.description, seconds, notes: out.notes ?? [], table: out.text, ...out.data };
    if (out.targets) targets.push(...out.targets.map((t) => ({ group: name, ...t })));
    console.log(`\n  (${name}: ${seconds.toFixed(1)} s)`);
  }

  if (targets.length > 0) {
    console.log('\n## targets\n');
    for (const t of targets)
      console.log(`  ${t.met ? 'met   ' : 'MISSED'}  ${t.name}: ${t.value.toFixed(2)}× (target ≥ ${t.min.toFixed(2)}×)`);
  }
  const total = (performance.now() - t0) / 1000;
  console.log(`\ntotal ${total.toFixed(1)} s`);

  const report = {
    date: started.toISOString(),
    machine: info,
    code,
    settings: { ...opts.settings, gc: hasGc },
    seconds: total,
    groups: results,
    targets,
  };
  mkdirSync(dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results: ${opts.out}`);
  if (opts.strict && targets.some((t) => !t.met)) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
