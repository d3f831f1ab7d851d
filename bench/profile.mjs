// CPU profile of canonicalize on one payload, summarised by function and by source line.
//
//   node bench/profile.mjs [payload] [style] [seconds] [--no-inline]   defaults: stt-1mb python 5
//
// Re-runs itself under `node --cpu-prof` (profile written to bench/results/profiles/), then prints
// the top self-time functions and lines inside canonicalize(), mapped back to
// packages/core/src/*.ts through the dist source maps. Payloads: webhook-1kb, ocr-30kb, stt-1mb;
// styles: python, compact.
//
// With inlining on (the default, as in production), an inlined callee's time is charged to its
// caller, and V8 reports the callee's line numbers against the CALLER's file, so lines of small
// helpers (ByteWriter, AsciiKeyCache) can show up under the wrong file. `--no-inline` runs the child
// with --no-turbo-inlining: slower overall, but every function and line is attributed exactly.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const [payloadName = 'stt-1mb', style = 'python', seconds = '5'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const noInline = process.argv.includes('--no-inline');

if (process.env.JOBHOOK_PROFILE_CHILD === '1') {
  // The profiled child: warm up, then loop.
  const { canonicalize } = await import('@jobhook/core/canonical');
  const { getPayload } = await import('./payloads.mjs');
  const body = getPayload(payloadName).bodies[style];
  const options = { profile: 'python', maxBodyBytes: 16 * 1024 * 1024 };
  const end = performance.now() + Number(seconds) * 1000;
  let n = 0;
  while (performance.now() < end) {
    canonicalize(body, options);
    n++;
  }
  console.log(
    `${payloadName}/${style}: ${n} canonicalize calls in ${seconds} s (${((n * body.length) / Number(seconds) / 1e6).toFixed(1)} MB/s under the profiler)`,
  );
} else {
  const dir = join(here, 'results', 'profiles');
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  const flags = ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(noInline ? ['--no-turbo-inlining'] : [])];
  const r = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), payloadName, style, seconds], {
    stdio: 'inherit',
    env: { ...process.env, JOBHOOK_PROFILE_CHILD: '1' },
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile') && !before.has(f))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  summarize(file);
}

function summarize(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const interval = (profile.endTime - profile.startTime) / profile.samples.length; // µs per sample
  const maps = new Map();
  const mapFor = (url) => {
    if (!maps.has(url)) {
      let map = null;
      try {
        const path = fileURLToPath(url);
        map = {
          map: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))),
          dir: dirname(path),
          lines: readFileSync(path, 'utf8').split('\n'),
        };
      } catch {
        // no source map (node internals, bench code)
      }
      maps.set(url, map);
    }
    return maps.get(url);
  };
  const where = (url, line) => {
    // `line` is 1-based, as in positionTicks; callFrame lines are 0-based (pass line + 1).
    const m = url ? mapFor(url) : null;
    if (m) {
      // Map the line's first token (column 0 is often indentation, which maps to an earlier line).
      const text = m.lines[line - 1] ?? '';
      const e = m.map.findEntry(line - 1, text.length - text.trimStart().length);
      if (e?.originalSource) return `${relative(root, resolve(m.dir, e.originalSource))}:${e.originalLine + 1}`;
    }
    if (!url) return '(native)';
    const p = url.startsWith('file:') ? relative(root, fileURLToPath(url)) : url;
    return `${p}:${line}`;
  };

  // Only samples taken inside canonicalize() count (not payload generation, idle or GC elsewhere).
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inside = (node) => {
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      if (byId.get(id).callFrame.functionName === 'canonicalize') return true;
    }
    return false;
  };
  let total = 0;
  const byFunction = new Map();
  const byLine = new Map();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const hits = node.hitCount ?? 0;
    if (hits === 0 || !inside(node)) continue;
    total += hits;
    const fn = `${functionName || '(anonymous)'}  ${where(url, lineNumber + 1)}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
    for (const { line, ticks } of node.positionTicks ?? []) {
      const key = `${where(url, line)}  (${functionName || '(anonymous)'})`;
      byLine.set(key, (byLine.get(key) ?? 0) + ticks);
    }
  }
  // Inclusive (total) time per function inside canonicalize: each sample counted once per function
  // on its stack, so recursion (value → object → value) is not counted twice.
  const inclusive = new Map();
  const rootNode = profile.nodes.find((n) => !parent.has(n.id));
  const stack = [];
  const walk = (node, under) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const fn = `${functionName || '(anonymous)'}  ${where(url, lineNumber + 1)}`;
    const nowUnder = under || functionName === 'canonicalize';
    stack.push(fn);
    const hits = node.hitCount ?? 0;
    if (nowUnder && hits > 0) for (const key of new Set(stack)) inclusive.set(key, (inclusive.get(key) ?? 0) + hits);
    for (const c of node.children ?? []) walk(byId.get(c), nowUnder);
    stack.pop();
  };
  walk(rootNode, false);

  const top = (m, n) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  console.log(
    `\nprofile${noInline ? ' (--no-turbo-inlining)' : ''}: ${relative(root, file)}: ${total} of ${profile.samples.length} samples (~${interval.toFixed(0)} µs each) inside canonicalize(); % of those`,
  );
  // Garbage collection shows as a root-level '(garbage collector)' node, outside canonicalize.
  const gcHits = profile.nodes.filter((n) => n.callFrame.functionName === '(garbage collector)').reduce((a, n) => a + (n.hitCount ?? 0), 0);
  console.log(`(garbage collector: ${gcHits} samples, ${((gcHits / (total + gcHits)) * 100).toFixed(1)}% of canonicalize + GC)`);
  console.log('\ntotal time by function (self + callees):');
  for (const key of [...inclusive.keys()]) if (/^\(root\)| {2}bench\//.test(key)) inclusive.delete(key);
  console.log(top(inclusive, 16));
  console.log('\nself time by function:');
  console.log(top(byFunction, 20));
  console.log('\nself time by source line:');
  console.log(top(byLine, 25));
  console.log(`\n(open ${basename(file)} in Chrome DevTools › Performance for the call tree)`);
}
