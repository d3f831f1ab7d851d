// A small measuring harness, written for ratios: the tasks being compared are measured in the same
// process, INTERLEAVED (one batch of each in turn, round after round), so CPU frequency changes,
// noisy neighbours and background GC hit both sides alike. A sequential runner such as tinybench
// measures A fully, then B, which lets drift on a shared 2-core machine leak into the ratio.
//
// Per task: a warm-up (JIT tiers up), a calibration to batches of ~`batchMs`, then samples (one
// batch each) until the task has been timed for at least `time` ms and has `minSamples` samples.
// A task's figure is the MEDIAN of its per-batch times per op; `rme` is the 95% margin of error of
// the mean, in percent.
//
// `gc()` (node --expose-gc) runs before and after each comparison, not between batches: a forced
// full GC every few ms shrinks V8's young generation and made allocation-heavy code look up to 2×
// slower than in a steady-state server (canonicalize 1 KB: 47k ops/s without, 21k with). Garbage
// a batch leaves may be collected during the next task's batch; interleaving spreads that evenly.
import { performance } from 'node:perf_hooks';

/** True when node runs with --expose-gc. */
export const hasGc = typeof globalThis.gc === 'function';
const gc = hasGc ? globalThis.gc : () => {};

/** Keeps results observable so V8 cannot drop the work. */
let sink = 0;
function consume(r) {
  if (r === undefined || r === null) return;
  sink = (sink + (typeof r === 'object' ? (r.length ?? 1) : typeof r === 'string' ? r.length : r === true ? 1 : 0)) | 0;
}

/** Default timing settings, overridden by `node bench/run.mjs --time=ms --warmup=ms` or `--quick`. */
export const DEFAULT_SETTINGS = Object.freeze({ time: 1000, warmup: 250, minSamples: 12, batchMs: 25 });

function runBatch(fn, ops) {
  const t0 = performance.now();
  for (let i = 0; i < ops; i++) consume(fn());
  return performance.now() - t0;
}

/** Ops per batch so one batch takes about `batchMs`. */
function calibrate(fn, batchMs) {
  let ops = 1;
  for (;;) {
    const ms = runBatch(fn, ops);
    if (ms >= batchMs / 4 || ops >= 1 << 24) return Math.max(1, Math.round((ops * batchMs) / Math.max(ms, 1e-3)));
    ops *= ms < batchMs / 64 ? 16 : 4;
  }
}

function stats(samplesNsPerOp) {
  const s = [...samplesNsPerOp].sort((a, b) => a - b);
  const n = s.length;
  const mean = s.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? s.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1) : 0;
  const median = n % 2 ? s[(n - 1) >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
  const rme = n > 1 ? ((1.96 * Math.sqrt(variance)) / Math.sqrt(n) / mean) * 100 : 0;
  return { median, mean, min: s[0], max: s[n - 1], rme, samples: n };
}

/** One task's figures from its per-batch samples (ns per op). */
function taskResult({ task, samples, count }) {
  const st = stats(samples);
  const opsPerSec = 1e9 / st.median;
  const out = {
    name: task.name,
    opsPerSec,
    nsPerOp: st.median,
    meanNsPerOp: st.mean,
    minNsPerOp: st.min,
    maxNsPerOp: st.max,
    rme: st.rme,
    samples: st.samples,
    ops: count,
    /** Per-batch ns per op in round order: sample i of each task of a comparison is from round i. */
    sampleNs: samples,
  };
  if (task.bytes !== undefined) {
    out.bytes = task.bytes;
    out.mbPerSec = (opsPerSec * task.bytes) / 1e6;
  }
  return out;
}

/**
 * Measures tasks interleaved. `tasks`: `[{ name, fn, bytes? }]`; `fn` does one operation and returns
 * its result (kept alive so it is not optimised away). Returns, per task in the same order:
 * `{ name, opsPerSec, nsPerOp, mbPerSec?, rme, samples, ops, ... }` where `opsPerSec` = 1e9 / median ns per op
 * and `mbPerSec` = opsPerSec × bytes / 1e6.
 */
export function compare(tasks, settings = DEFAULT_SETTINGS) {
  const { time, warmup, minSamples, batchMs } = { ...DEFAULT_SETTINGS, ...settings };
  // Warm up every task (round-robin, so none is left colder), then size its batches.
  gc();
  for (const task of tasks) consume(task.fn()); // fail fast on a broken task
  const warmEnd = performance.now() + warmup * tasks.length;
  while (performance.now() < warmEnd) {
    for (const task of tasks) {
      const sliceEnd = performance.now() + 5;
      do consume(task.fn());
      while (performance.now() < sliceEnd);
    }
  }
  const state = tasks.map((task) => ({ task, ops: calibrate(task.fn, batchMs), timed: 0, samples: [], count: 0 }));
  const done = (s) => s.timed >= time && s.samples.length >= minSamples;
  while (!state.every(done)) {
    // Every task keeps sampling until all are done, so the rounds stay interleaved to the end.
    for (const s of state) {
      const ms = runBatch(s.task.fn, s.ops);
      s.timed += ms;
      s.count += s.ops;
      s.samples.push((ms * 1e6) / s.ops);
    }
  }
  gc();
  return state.map(taskResult);
}

/**
 * The async counterpart of harness.mjs `compare`: tasks warmed up round-robin, calibrated to
 * ~BATCH_MS batches, then sampled interleaved until each has `time` ms and `minSamples` batches.
 * A task is `{ name, fn: async () => {}, concurrency }`; a batch of n ops runs n calls of fn with
 * at most `concurrency` pending. Returns `{ name, opsPerSec, nsPerOp, rme, samples, ops }` per task.
 */
export async function compareAsync(tasks, settings = DEFAULT_SETTINGS) {
  const { time, warmup, minSamples, batchMs: BATCH_MS } = { ...DEFAULT_SETTINGS, ...settings };
  const runBatch = async (task, n) => {
    let started = 0;
    const worker = async () => {
      while (started < n) {
        started++;
        await task.fn();
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: Math.min(task.concurrency, n) }, worker));
    return performance.now() - t0;
  };
  globalThis.gc?.();
  for (const task of tasks) await task.fn(); // fail fast on a broken task
  const warmEnd = performance.now() + warmup * tasks.length;
  while (performance.now() < warmEnd) for (const task of tasks) await runBatch(task, Math.max(task.concurrency, 50));
  const state = [];
  for (const task of tasks) {
    let n = task.concurrency;
    for (;;) {
      const ms = await runBatch(task, n);
      if (ms >= BATCH_MS / 4) {
        n = Math.max(task.concurrency * 2, Math.round((n * BATCH_MS) / ms));
        break;
      }
      n *= 4;
    }
    state.push({ task, n, timed: 0, samples: [], count: 0 });
  }
  const done = (s) => s.timed >= time && s.samples.length >= minSamples;
  while (!state.every(done)) {
    // Each round runs the tasks in turn, starting from a different one (at 1 in flight the event
    // loop's state left by the previous batch favours no task).
    const first = state[0].samples.length % state.length;
    for (let k = 0; k < state.length; k++) {
      const s = state[(first + k) % state.length];
      const ms = await runBatch(s.task, s.n);
      s.timed += ms;
      s.count += s.n;
      s.samples.push((ms * 1e6) / s.n);
    }
  }
  globalThis.gc?.();
  return state.map(taskResult);
}
