/**
 * Run size and seed of the receive-pipeline fuzz tests, from the environment:
 * - `FUZZ_RUNS`: total cases across all properties (default 5,000; e.g. 200,000 for a long run);
 *   each property gets a fixed share of it.
 * - `FUZZ_SEED`: the fast-check seed (default fixed, so a plain run is reproducible). fast-check
 *   prints `seed` and `path` of a failure; rerun with that `FUZZ_SEED` (and the same `FUZZ_RUNS`).
 */

/** Default total number of cases: about 10 s on two cores. */
export const DEFAULT_FUZZ_RUNS = 5_000;
/** Default seed: fixed, so that CI runs are reproducible. */
export const DEFAULT_FUZZ_SEED = 0x6a6f6268; // 'jobh'

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

/** Total cases across properties. */
export const FUZZ_RUNS = intFromEnv('FUZZ_RUNS', DEFAULT_FUZZ_RUNS, 10);
/** The fast-check seed every property runs with. */
export const FUZZ_SEED = intFromEnv('FUZZ_SEED', DEFAULT_FUZZ_SEED, -(2 ** 31));

/** The number of runs of a property that gets `share` (0..1) of the total; at least 5. */
export function runsFor(share: number): number {
  return Math.max(5, Math.round(FUZZ_RUNS * share));
}

/**
 * A vitest timeout for `runs` cases costing about `perRunMs` each (measured, with a wide margin for a
 * busy machine and for shrinking a failure), plus a fixed allowance.
 */
export function timeoutFor(runs: number, perRunMs: number): number {
  return 30_000 + Math.ceil(runs * perRunMs * 4);
}
