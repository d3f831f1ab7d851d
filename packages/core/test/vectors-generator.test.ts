/**
 * vectors/vectors.jsonl is the output of vectors/generate.py, byte for byte: `--check` regenerates it in
 * memory (signing with the committed keys in one node process) and compares. python3 is required: a
 * machine without it fails here, never skips.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const VECTORS_DIR = path.join(REPO_ROOT, 'vectors');

/** Runs `python3 <dir>/generate.py --check`, with this process's node first on PATH (the generator signs through it). */
function check(dir: string): { status: number | null; output: string } {
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}` };
  const res = spawnSync('python3', [path.join(dir, 'generate.py'), '--check'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 30_000 });
  if (res.error !== undefined) throw new Error(`could not run python3 (it is required to check the vectors): ${res.error.message}`);
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

const tmp = mkdtempSync(path.join(tmpdir(), 'jobhook-vectors-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('vectors/generate.py --check', () => {
  it('reproduces the committed vectors.jsonl byte for byte, from the committed keys', () => {
    const { status, output } = check(VECTORS_DIR);
    expect(status, output).toBe(0);
    expect(output).toMatch(/matches the generator \(\d+ cases\)/);
  });

  it('fails on a vectors.jsonl that differs from the generator (a copy with one line changed)', () => {
    const copy = path.join(tmp, 'vectors');
    cpSync(VECTORS_DIR, copy, { recursive: true });
    const file = path.join(copy, 'vectors.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"expect": "valid"', '"expect": "invalid"');
    writeFileSync(file, lines.join('\n'));
    const { status, output } = check(copy);
    expect(status, output).toBe(1);
    expect(output).toContain('first difference at line 2');
  });
});
