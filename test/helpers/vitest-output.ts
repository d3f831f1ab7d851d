// How every vitest run of this repository prints (vitest.config.ts), in one place shared with the
// test that checks it (test/reporter/quiet-output.test.ts), so that test runs what `npm test` runs.
import { fileURLToPath } from 'node:url';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * A green run reads green: what a test, or the code under test, prints (a logger's warn line for a
 * refusal the test provoked, a child's stderr, a framework's error print) is shown only under a test
 * that failed, after it (`silent: 'passed-only'`); quiet-output.ts routes what is written straight
 * to process.stdout/stderr into that capture. The summary reporter's closing line, which CI reads,
 * comes last: after the default reporter's failures and totals. `--silent=false` shows everything.
 */
export function outputSettings(): { silent: 'passed-only'; setupFiles: string[]; reporters: string[] } {
  return {
    silent: 'passed-only',
    setupFiles: [here('./quiet-output.ts')],
    reporters: ['default', here('../summary-reporter.ts')],
  };
}
