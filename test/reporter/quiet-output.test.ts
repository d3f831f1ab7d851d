// A green run reads green: a real vitest run, printed as `npm test` prints (the settings of
// test/helpers/vitest-output.ts), over fixture files whose tests log the way the code under test
// does (core's default logger writing to process.stderr, the console, process.stdout). A passing
// test's lines never reach the output; a failing test's do; the closing line CI reads is last.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'quiet-fixtures');
const VITEST = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'jobhook-quiet-output-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs vitest on one fixture file; its exit code and its output, stdout and stderr in the order
 * written (both go to one file), as a terminal or a CI log shows them.
 */
function runFixture(file: string, config = 'vitest.config.ts'): Promise<{ code: number | null; lines: string[] }> {
  // The outer run's VITEST_* variables would make the inner vitest think it runs inside a worker.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')));
  const outPath = join(scratch, `${file}.${config}.log`);
  const out = openSync(outPath, 'w');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITEST, 'run', file, '--config', config], {
      cwd: FIXTURES,
      env: { ...env, NO_COLOR: '1' },
      stdio: ['ignore', out, out],
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      closeSync(out);
      resolve({ code, lines: readFileSync(outPath, 'utf8').trimEnd().split('\n') });
    });
  });
}

describe('what a run prints', () => {
  test("a passing run shows none of its tests' log lines, and ends with the closing line", async () => {
    const { code, lines } = await runFixture('passes-with-logs.fixture.ts');
    expect(code).toBe(0);
    expect(lines.filter((line) => line.includes('marker:'))).toEqual([]);
    expect(lines.at(-1)).toBe('tests: 2 passed, 0 failed, 0 skipped');
  });

  test("a failing test's log lines are shown, a passing neighbour's are not, and the closing line is last", async () => {
    const { code, lines } = await runFixture('fails-with-logs.fixture.ts');
    expect(code).toBe(1);
    // The logger's JSON lines (the failure's code frame quotes the source, marker included).
    const logLines = lines.filter((line) => line.startsWith('{') && line.includes('marker:'));
    expect(logLines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 50, code: 'ERR_STORE_UNAVAILABLE', msg: 'marker: default logger of the failing test' }),
    ]);
    // Under the name of the test that failed.
    expect(lines[lines.indexOf(logLines[0]!) - 1]).toMatch(/^stderr \| fails-with-logs\.fixture\.ts > logs, and fails/);
    expect(lines.at(-1)).toBe('tests: 1 passed, 1 failed, 0 skipped');
  });

  test("when vitest's closing times out (a handle left open), its warnings come before the closing line", async () => {
    const { code, lines } = await runFixture('passes-with-logs.fixture.ts', 'vitest.hang.config.ts');
    expect(code).toBe(0);
    expect(lines).toContain('close timed out after 500ms');
    expect(lines.at(-1)).toBe('tests: 2 passed, 0 failed, 0 skipped');
  });
});
