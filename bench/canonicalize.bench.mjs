// Group `canonicalize`: throughput of canonicalize(body, { profile: 'python' }) against the native
// JSON round trip, on the three generated payloads in both body styles.
import { parseBody } from '@jobhook/core/json';
import { canonicalize } from '@jobhook/core/canonical';
import { BODY_STYLES, getPayloads } from './payloads.mjs';
import { num, ops, ratio, table, verdict, withRme, logResult } from './report.mjs';

export const description = 'canonicalize(body, { profile: "python" }) vs native JSON.parse + JSON.stringify(v, null, 2)';

/** Minimum ours/native ratio the issue asks for. */
export const TARGET = 1.0;

// The bodies are below the default 1 MiB limit; the explicit limit keeps the group working if a
// payload grows past it. It changes nothing in the work done.
const OPTIONS = Object.freeze({ profile: 'python', maxBodyBytes: 16 * 1024 * 1024 });

export const NOTES = [
  'ours   = canonicalize(buf, { profile: "python" }): Buffer in, Buffer out. Parses (lossless tape, validates UTF-8 as Python does), sorts keys by code point, writes 2-space indent, Python float repr, re-escapes.',
  'native = Buffer.from(JSON.stringify(JSON.parse(buf.toString("utf8")), null, 2)): Buffer in, Buffer out (UTF-8 decode and encode included). No key sort, not Python-exact (1.0 → 1): a speed reference only.',
  'parse  = parseBody(buf): the parsing part of ours alone; ours minus parse ≈ key sort + serialization.',
  'MB/s = input body bytes (10^6) per second; ops/s from the median batch; ±x% = 95% margin of error of the mean.',
];

/** @param {{ compare: Function, settings: object, log: (s: string) => void }} ctx */
export async function run({ compare, settings, log }) {
  const payloads = getPayloads();
  const rows = [];
  for (const p of payloads) {
    // Sanity: both body styles of a payload have the same canonical form.
    const canon = BODY_STYLES.map((style) => canonicalize(p.bodies[style], OPTIONS));
    if (!canon.every((c) => c.equals(canon[0]))) throw new Error(`${p.name}: body styles canonicalize differently`);

    for (const style of BODY_STYLES) {
      const buf = p.bodies[style];
      const bytes = buf.length;
      log(`  ${p.name} (${style}, ${num(bytes)} bytes)…`);
      const [ours, native, parse] = compare(
        [
          { name: 'ours', bytes, fn: () => canonicalize(buf, OPTIONS) },
          { name: 'native', bytes, fn: () => Buffer.from(JSON.stringify(JSON.parse(buf.toString('utf8')), null, 2), 'utf8') },
          { name: 'parse', bytes, fn: () => parseBody(buf, OPTIONS).tape },
        ],
        settings,
      );
      rows.push({
        payload: p.name,
        style,
        bytes,
        canonicalBytes: canon[0].length,
        ours,
        native,
        parse,
        ratio: ours.opsPerSec / native.opsPerSec,
        parseShare: ours.nsPerOp > 0 ? parse.nsPerOp / ours.nsPerOp : 0,
      });
    }
  }

  const text = table(
    [
      { header: 'payload', align: 'left' },
      { header: 'body', align: 'left' },
      { header: 'bytes' },
      { header: 'ours ops/s' },
      { header: 'ours MB/s' },
      { header: 'native ops/s' },
      { header: 'native MB/s' },
      { header: 'ours/native' },
      { header: `≥${TARGET.toFixed(2)}×?` },
      { header: 'parse share' },
    ],
    rows.map((r) => [
      r.payload,
      r.style,
      num(r.bytes),
      withRme(ops(r.ours.opsPerSec), r.ours.rme),
      num(r.ours.mbPerSec, 1),
      withRme(ops(r.native.opsPerSec), r.native.rme),
      num(r.native.mbPerSec, 1),
      ratio(r.ratio),
      verdict(r.ratio, TARGET),
      `${(r.parseShare * 100).toFixed(0)}%`,
    ]),
  );
  logResult(log, text, NOTES);

  return {
    text,
    notes: NOTES,
    data: {
      options: OPTIONS,
      payloads: payloads.map((p) => ({
        name: p.name,
        description: p.description,
        bytes: Object.fromEntries(BODY_STYLES.map((s) => [s, p.bodies[s].length])),
      })),
      rows,
    },
    targets: rows.map((r) => ({
      name: `canonicalize ${r.payload}/${r.style} ours/native`,
      value: r.ratio,
      min: TARGET,
      met: r.ratio >= TARGET,
    })),
  };
}
