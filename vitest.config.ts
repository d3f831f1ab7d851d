import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Packages are tested from their sources; the CLI tests spawn the built binary.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
  resolve: {
    conditions: ['source'],
  },
});
