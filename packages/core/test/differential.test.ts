/**
 * Differential test of `canonicalize` against the reference itself: python3's `json.loads` followed by
 * `json.dumps(v, sort_keys=True, indent=2, ensure_ascii=False|True)` and
 * `orjson.dumps(v, option=OPT_INDENT_2 | OPT_SORT_KEYS)`, byte for byte, per profile, per body.
 *
 * Bodies are JSON *text* generated directly (JavaScript values cannot express Python's ints and
 * floats exactly) by a seeded fast-check arbitrary, plus fixed regression cases (both in
 * differential/generators.ts); all of them go to ONE python3 process (helpers/oracle.py).
 *
 * Environment: DIFF_SEED (default below) and DIFF_RUNS (at least 2000) reproduce or widen a run;
 * PYTHON names the interpreter (default python3).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { JobhookError } from '../src/index.js';
import { canonicalize } from '../src/canonical/index.js';
import {
  ORACLE_PROFILES,
  streamPythonOracle,
  type OracleCase,
  type OracleMeta,
  type OracleOutput,
  type OracleProfile,
  type OracleResult,
} from './helpers/python-oracle.js';
import { fixedCases, generatedBodies } from './differential/generators.js';

// ---------------------------------------------------------------------------------------------------
// Configuration

const DEFAULT_SEED = 0x5eed_c0de;
const MIN_RUNS = 2000;

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return n;
}

const SEED = intFromEnv('DIFF_SEED', DEFAULT_SEED);
const RUNS = Math.max(MIN_RUNS, intFromEnv('DIFF_RUNS', MIN_RUNS));

// ---------------------------------------------------------------------------------------------------
// Comparison

type Ours = { kind: 'bytes'; bytes: Buffer } | { kind: 'error'; code: string; message: string } | { kind: 'crash'; error: unknown };

function ours(body: Buffer, profile: OracleProfile): Ours {
  try {
    return { kind: 'bytes', bytes: canonicalize(body, { profile }) };
  } catch (err) {
    if (err instanceof JobhookError) return { kind: 'error', code: err.code, message: err.message };
    return { kind: 'crash', error: err };
  }
}

/** Bytes as readable text: printable ASCII as is, the rest as escapes. */
function showBytes(b: Uint8Array, max = 600): string {
  let s = '';
  const n = Math.min(b.length, max);
  for (let i = 0; i < n; i++) {
    const c = b[i]!;
    if (c === 0x5c) s += '\\\\';
    else if (c === 0x0a) s += '\\n';
    else if (c === 0x0d) s += '\\r';
    else if (c === 0x09) s += '\\t';
    else if (c >= 0x20 && c < 0x7f) s += String.fromCharCode(c);
    else s += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return b.length > max ? `${s}... (${b.length} bytes)` : s;
}

function showOurs(o: Ours): string {
  if (o.kind === 'bytes') return `${o.bytes.length} bytes`;
  if (o.kind === 'error') return `${o.code}: ${o.message}`;
  return `CRASH (not a JobhookError): ${o.error instanceof Error ? (o.error.stack ?? o.error.message) : String(o.error)}`;
}

function showTheirs(t: OracleOutput): string {
  if (t.kind === 'bytes') return `${t.bytes.length} bytes`;
  if (t.kind === 'error') return `raises ${t.error}`;
  return 'skipped';
}

function diffWindow(a: Buffer, b: Buffer): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 60);
  return (
    `first difference at byte ${i} (ours ${a.length} bytes, python ${b.length} bytes)\n` +
    `      ours[${from}..]: ${showBytes(a.subarray(from, i + 60))}\n` +
    `    python[${from}..]: ${showBytes(b.subarray(from, i + 60))}`
  );
}

interface Mismatch {
  readonly id: string;
  readonly note: string;
  readonly profile: OracleProfile | 'parse';
  readonly body: Buffer;
  readonly detail: string;
}

interface Tally {
  compared: number;
  byteEqual: Record<OracleProfile, number>;
  unrepresentable: Record<OracleProfile, number>;
  loadsErrors: number;
  notObject: number;
  nonUtf8Accepted: number;
  orjsonSkipped: number;
}

function newTally(): Tally {
  return {
    compared: 0,
    byteEqual: { python: 0, 'python-ascii': 0, orjson: 0 },
    unrepresentable: { python: 0, 'python-ascii': 0, orjson: 0 },
    loadsErrors: 0,
    notObject: 0,
    nonUtf8Accepted: 0,
    orjsonSkipped: 0,
  };
}

const UTF8_ENCODINGS = new Set(['utf-8', 'utf-8-sig']);

/** Compares one body in every profile; pushes mismatches, counts what was exercised. */
function compareCase(c: { id: string; note: string; body: Buffer }, py: OracleResult, tally: Tally, out: Mismatch[]): void {
  tally.compared++;
  const fail = (profile: Mismatch['profile'], detail: string): void => {
    out.push({ id: c.id, note: c.note, profile, body: c.body, detail });
  };
  const mineAll = ORACLE_PROFILES.map((p) => [p, ours(c.body, p)] as const);
  const parseVerdict = (want: (o: Ours) => boolean, why: string): void => {
    for (const [p, mine] of mineAll) {
      if (!want(mine)) fail(p, `${why}; ours: ${showOurs(mine)}`);
    }
  };

  if (py.loadsError !== null) {
    tally.loadsErrors++;
    parseVerdict(
      (o) => o.kind === 'error' && o.code.startsWith('ERR_BODY_'),
      `python's json.loads raises (${py.loadsError}), so ours must throw ERR_BODY_*`,
    );
    return;
  }
  if (!UTF8_ENCODINGS.has(py.encoding)) {
    // Documented divergence: json.loads(bytes) also decodes UTF-16/32 bodies (json.detect_encoding);
    // jobhook reads UTF-8 only, as every signer sends, and refuses the rest as malformed.
    tally.nonUtf8Accepted++;
    parseVerdict(
      (o) => o.kind === 'error' && o.code === 'ERR_BODY_MALFORMED',
      `python decodes this body as ${py.encoding}; jobhook reads UTF-8 only and must throw ERR_BODY_MALFORMED`,
    );
    return;
  }
  if (!py.isObject) {
    tally.notObject++;
    parseVerdict(
      (o) => o.kind === 'error' && o.code === 'ERR_BODY_NOT_OBJECT',
      'python parses a non-object, so ours must throw ERR_BODY_NOT_OBJECT',
    );
    return;
  }
  for (const [profile, mine] of mineAll) {
    const theirs = py.outputs[profile];
    if (theirs.kind === 'skipped') {
      tally.orjsonSkipped++;
      continue;
    }
    if (theirs.kind === 'error') {
      if (mine.kind === 'error' && mine.code === 'ERR_CANONICAL_UNREPRESENTABLE') tally.unrepresentable[profile]++;
      else fail(profile, `python ${showTheirs(theirs)}, so ours must throw ERR_CANONICAL_UNREPRESENTABLE; ours: ${showOurs(mine)}`);
      continue;
    }
    if (mine.kind !== 'bytes') {
      fail(profile, `python writes ${showTheirs(theirs)}; ours: ${showOurs(mine)}\n    python: ${showBytes(theirs.bytes, 300)}`);
    } else if (!mine.bytes.equals(theirs.bytes)) {
      fail(profile, diffWindow(mine.bytes, theirs.bytes));
    } else {
      tally.byteEqual[profile]++;
    }
  }
}

function report(mismatches: readonly Mismatch[], what: string): string {
  const ids = new Set(mismatches.map((m) => m.id));
  // Shortest bodies first: they are the easiest to read and to turn into a regression case.
  const shown = [...mismatches].sort((a, b) => a.body.length - b.body.length).slice(0, 8);
  const lines = [
    `${mismatches.length} mismatch(es) in ${ids.size} ${what} body/bodies (fast-check seed ${SEED}, runs ${RUNS}; ` +
      `reproduce with DIFF_SEED=${SEED} DIFF_RUNS=${RUNS}). Shortest first:`,
  ];
  for (const m of shown) {
    lines.push(
      '',
      `• case ${m.id} [${m.profile}] ${m.note}`,
      `    body (escaped like a Python bytes literal): ${showBytes(m.body, 400)}`,
      `    body_b64: ${m.body.length <= 3000 ? m.body.toString('base64') : '(long; see id)'}`,
      `    ${m.detail}`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------
// The test

interface Case extends OracleCase {
  readonly body: Buffer;
  readonly note: string;
}

const fixed: Case[] = fixedCases().map((f, i) => ({ id: `fixed-${i}:${f.name}`, body: f.body, note: f.name }));
const generated: Case[] = fc
  .sample(generatedBodies, { seed: SEED, numRuns: RUNS })
  .map((g, i) => ({ id: `gen-${i}`, body: g.body, note: g.note }));

interface Outcome {
  readonly tally: Tally;
  readonly mismatches: Mismatch[];
}

// Large DIFF_RUNS need more than the default hook timeout.
const ORACLE_TIMEOUT_MS = Math.max(60_000, RUNS * 5);

describe(`differential: canonicalize vs python3 (seed ${SEED}, ${RUNS} generated + ${fixed.length} fixed bodies)`, () => {
  let meta: OracleMeta;
  const fixedOutcome: Outcome = { tally: newTally(), mismatches: [] };
  const generatedOutcome: Outcome = { tally: newTally(), mismatches: [] };

  beforeAll(async () => {
    const all = [...fixed, ...generated];
    const byId = new Map(all.map((c) => [c.id, c]));
    const fixedIds = new Set(fixed.map((c) => c.id));
    // One python3 process for the whole batch; each answer is compared as it arrives.
    const run = await streamPythonOracle(all, (py) => {
      const c = byId.get(py.id)!;
      const outcome = fixedIds.has(c.id) ? fixedOutcome : generatedOutcome;
      compareCase(c, py, outcome.tally, outcome.mismatches);
    });
    meta = run.meta;
    console.info(
      `[differential] python ${meta.python}, orjson ${meta.orjson ?? 'MISSING'}: ` +
        `${run.count} bodies through one python3 process, compared in ${Math.round(run.elapsedMs)} ms`,
    );
  }, ORACLE_TIMEOUT_MS);

  it('runs against a Python that has orjson: the orjson profile is compared, never skipped', () => {
    expect(
      meta.orjson,
      `\`import orjson\` failed in ${process.env['PYTHON'] ?? 'python3'} (${meta.orjsonError ?? 'unknown error'}), so the orjson ` +
        'profile could not be compared. Run the tests with a python3 that has orjson (PYTHON=/path/to/python3), ' +
        'e.g. the one on PATH in CI; Debian bookworm has no python3-orjson package.',
    ).not.toBeNull();
    expect(fixedOutcome.tally.orjsonSkipped + generatedOutcome.tally.orjsonSkipped).toBe(0);
  });

  it('runs against a Python that has the 4300-digit integer limit (3.11+)', () => {
    expect(meta.intMaxStrDigits, `python3 ${meta.python} must be 3.11+ with the default int_max_str_digits (4300), like the signers`).toBe(
      4300,
    );
  });

  it('agrees on the fixed regression cases, per profile', () => {
    const { tally, mismatches } = fixedOutcome;
    if (mismatches.length > 0) throw new Error(report(mismatches, 'fixed'));
    expect(tally.compared).toBe(fixed.length);
    // Each family of regression cases reaches the branch it is there for.
    expect(tally.loadsErrors).toBeGreaterThan(20);
    expect(tally.unrepresentable.python).toBeGreaterThan(10);
    expect(tally.notObject).toBeGreaterThan(5);
    expect(tally.nonUtf8Accepted).toBeGreaterThan(0);
    expect(tally.unrepresentable.orjson).toBeGreaterThan(tally.unrepresentable.python);
  });

  it(`agrees on ${RUNS} generated bodies, byte for byte, per profile`, () => {
    const { tally, mismatches } = generatedOutcome;
    console.info(`[differential] seed ${SEED}: ${JSON.stringify(tally)}`);
    if (mismatches.length > 0) throw new Error(report(mismatches, 'generated'));
    expect(tally.compared).toBe(RUNS);
    // The generator keeps exercising what it is meant to (guards against a silently degenerate generator).
    expect(tally.byteEqual.python).toBeGreaterThan(RUNS * 0.6);
    expect(tally.byteEqual['python-ascii']).toBeGreaterThan(RUNS * 0.75);
    expect(tally.unrepresentable.python).toBeGreaterThan(RUNS * 0.02);
    expect(tally.loadsErrors).toBeGreaterThan(RUNS * 0.01);
    expect(tally.notObject).toBeGreaterThan(RUNS * 0.005);
    expect(tally.byteEqual.orjson).toBeGreaterThan(RUNS * 0.5);
    expect(tally.unrepresentable.orjson).toBeGreaterThan(tally.unrepresentable.python);
  });
});
