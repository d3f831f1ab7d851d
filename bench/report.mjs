// Formatting helpers shared by the benchmark groups, and the machine description.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** `1234567.8` → `1,234,568`; small numbers keep `digits` significant decimals. */
export function num(x, digits = 0) {
  if (x === undefined || x === null || Number.isNaN(x)) return '—';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Ops per second, 3 significant digits at least. */
export function ops(x) {
  return x >= 100 ? num(x) : num(x, x >= 10 ? 1 : 2);
}

/** A ratio as `1.23×`. */
export function ratio(x) {
  return `${x.toFixed(2)}×`;
}

/** A figure with its margin of error: `12,345 ±1.2%`. */
export function withRme(text, rme) {
  return `${text} ±${rme.toFixed(1)}%`;
}

/** `met`/`MISSED` against a minimum. */
export function verdict(value, min) {
  return value >= min ? 'met' : 'MISSED';
}

/**
 * A plain-text table. `columns`: `[{ header, align?: 'left' | 'right' }]`; `rows`: arrays of strings.
 * The same text is valid GitHub Markdown (pipes), so RESULTS.md can take it verbatim.
 */
export function table(columns, rows) {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => String(r[i]).length)));
  const cell = (text, i) => {
    const t = String(text);
    return columns[i].align === 'left' ? t.padEnd(widths[i]) : t.padStart(widths[i]);
  };
  const line = (cells) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (columns[i].align === 'left' ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(columns.map((c) => c.header)), rule, ...rows.map(line)].join('\n');
}

/** What ran the benchmark. */
export function machine() {
  let model = os.cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) model = m[1].trim();
  } catch {
    // not Linux
  }
  return {
    cores: os.availableParallelism?.() ?? os.cpus().length,
    cpuModel: model,
    node: process.version,
    v8: process.versions.v8,
    openssl: process.versions.openssl,
    platform: `${process.platform} ${os.release()} ${process.arch}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  };
}

/**
 * Which code was measured: the git commit (read-only `git rev-parse`) and a fingerprint of the
 * built packages/core/dist JavaScript, which changes with any uncommitted edit that was built.
 */
export function codeVersion() {
  let commit = 'unknown';
  const r = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' });
  if (r.status === 0) commit = r.stdout.trim();
  const dist = join(root, 'packages/core/dist');
  const hash = createHash('sha256');
  let files = 0;
  try {
    const walk = (dir) => {
      for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js')) {
          hash.update(relative(dist, path)).update('\0').update(readFileSync(path)).update('\0');
          files++;
        }
      }
    };
    walk(dist);
  } catch {
    return { commit, coreDist: 'not built' };
  }
  return { commit, coreDist: `${hash.digest('hex').slice(0, 12)} (${files} files)` };
}

/** Logs a group's tables, lines to show right after them, and its notes, as every group prints them. */
export function logResult(log, text, notes, after = []) {
  log('');
  log(text);
  for (const line of after) log(line);
  log('');
  for (const note of notes) log(`  ${note}`);
}
