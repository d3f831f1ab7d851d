// The closing line CI reads, from a real vitest run over fixture files that fail in each way a run
// can: it says "N failed" with N > 0 whenever vitest exits non-zero, and counts the tests a broken
// hook kept from running as failed, not skipped.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(HERE, 'fixtures');
const REPORTER = resolve(HERE, '../summary-reporter.ts');
const VITEST = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');

/** Runs vitest on one fixture file with only the summary reporter; its exit code and closing line. */
function runFixture(file: string): Promise<{ code: number; closing: string }> {
  // The outer run's VITEST_* variables would make the inner vitest think it runs inside a worker.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')));
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [VITEST, 'run', file, '--reporter', REPORTER],
      { cwd: FIXTURES, env: { ...env, NO_COLOR: '1' } },
      (error, stdout) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        const closing = stdout.trimEnd().split('\n').at(-1) ?? '';
        if (!closing.startsWith('tests: ')) reject(new Error(`no closing line from ${file}:\n${stdout}\n${error ?? ''}`));
        else resolvePromise({ code, closing });
      },
    );
  });
}

describe('the closing line', () => {
  test.each([
    // beforeAll at the top of the file throws: its 2 tests never ran (the .skip one stays skipped).
    ['module-hook-throws.fixture.ts', 'tests: 0 passed, 2 failed, 1 skipped'],
    // beforeAll of one describe throws: its test failed, the test outside it passed.
    ['suite-hook-throws.fixture.ts', 'tests: 1 passed, 1 failed, 0 skipped'],
    // afterAll throws after the test passed.
    ['after-all-throws.fixture.ts', 'tests: 1 passed, 1 failed, 0 skipped'],
    // The file throws while loading: no test collected.
    ['import-fails.fixture.ts', 'tests: 0 passed, 1 failed, 0 skipped'],
    // The test passes but leaves an unhandled rejection, which fails the run.
    ['unhandled-rejection.fixture.ts', 'tests: 1 passed, 1 failed, 0 skipped'],
  ])('%s fails the run and says so: %s', async (file, line) => {
    const { code, closing } = await runFixture(file);
    expect(code).toBe(1);
    expect(closing).toBe(line);
  });

  test('a passing file with .skip, .todo and ctx.skip() tests counts them skipped, and exits 0', async () => {
    expect(await runFixture('passing.fixture.ts')).toEqual({ code: 0, closing: 'tests: 1 passed, 0 failed, 3 skipped' });
  });
});
