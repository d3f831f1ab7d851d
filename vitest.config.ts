import { defineConfig } from 'vitest/config';
import { outputSettings } from './test/helpers/vitest-output.js';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Packages are tested from their sources; the CLI tests spawn the built binary.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for an event; its timeout is a hang guard, not a speed check (the default,
    // 1 s, is a wall-clock bound a busy 2-core machine can miss).
    expect: { poll: { timeout: 30_000 } },
    // Only a failed test's output is shown, and the closing line comes last (`npm run chaos` shows
    // everything with --silent=false): see test/helpers/vitest-output.ts.
    ...outputSettings(),
  },
  resolve: {
    conditions: ['source'],
  },
});
