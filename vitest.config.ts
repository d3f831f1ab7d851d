import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Packages are tested from their sources; the CLI tests spawn the built binary.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for an event; its timeout is a hang guard, not a speed check (the default,
    // 1 s, is a wall-clock bound a busy 2-core machine can miss).
    expect: { poll: { timeout: 30_000 } },
    // A green run reads green: what a test, or the code under test, prints (a logger's warn line for
    // a refusal the test provoked, a child's stderr) is shown only under a test that failed, after
    // it; test/helpers/quiet-output.ts routes what is written straight to process.stdout/stderr
    // into that capture. `--silent=false` shows everything (`npm run chaos` uses it for its report).
    silent: 'passed-only',
    setupFiles: ['./test/helpers/quiet-output.ts'],
    // The summary reporter's closing line, which CI reads, comes last: after the default reporter's
    // failures and totals.
    reporters: ['default', './test/summary-reporter.ts'],
  },
  resolve: {
    conditions: ['source'],
  },
});
