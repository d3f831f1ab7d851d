// Prints one closing line in the plain form any CI reads: "tests: N passed, N failed, N skipped".
// The line never reads "0 failed" when the run failed: a test that a failing hook or file kept from
// running counts as failed, not skipped (a browser that cannot start in beforeAll fails every test
// it would have driven), and so does each error outside any test. It is the last line of the run:
// after the default reporter's failures and totals (reporters run in the order vitest.config.ts
// lists them), and written again after vitest's own warnings when closing timed out (a handle left
// open), so whatever reads the last line reads it.
import type { Reporter, SerializedError, TestCase, TestModule, TestRunEndReason, TestSuite } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  private line: string | undefined;

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      // Suites and files whose own errors (a hook that threw, a file that failed to load) some
      // test's count already shows.
      const shown = new Set<TestSuite | TestModule>();
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        const broken = state === 'passed' || state === 'failed' || !meantToRun(test) ? undefined : brokenAncestor(test);
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else if (broken !== undefined) {
          failed++;
          shown.add(broken);
        } else skipped++;
      }
      // An error no test shows: a file that failed to load, an afterAll that threw after its tests passed.
      for (const entity of [module, ...module.children.allSuites()]) {
        if (entity.errors().length > 0 && !shown.has(entity)) failed++;
      }
    }
    // Errors outside every file (an unhandled rejection) fail the run too.
    failed += unhandledErrors.length;
    // Whatever else failed the run (a timeout on teardown, an interrupt), the line says so.
    if (reason !== 'passed' && failed === 0) failed = 1;
    this.line = `tests: ${passed} passed, ${failed} failed, ${skipped} skipped`;
    process.stdout.write(`\n${this.line}\n`);
  }

  /** Closing hung: vitest prints why, then exits. The closing line follows those warnings. */
  onProcessTimeout(): void {
    const line = this.line;
    if (line !== undefined) process.once('exit', () => void process.stdout.write(`${line}\n`));
  }
}

/** A test not written as `.skip` or `.todo` (nor left out by an `.only` elsewhere). */
function meantToRun(test: TestCase): boolean {
  return test.options.mode === 'run' || test.options.mode === 'only';
}

/** The nearest suite or file above `test` with errors of its own, which kept it from running. */
function brokenAncestor(test: TestCase): TestSuite | TestModule | undefined {
  for (let parent: TestSuite | TestModule = test.parent; ; parent = parent.parent) {
    if (parent.errors().length > 0) return parent;
    if (parent.type === 'module') return undefined;
  }
}
