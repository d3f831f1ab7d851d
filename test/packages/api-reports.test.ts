// The public surface is tracked: every published entry has a report of its names and their shapes in
// packages/<pkg>/api/, made from the built declarations by scripts/api-report.mjs. A change of a
// public name shows in review as a change of those files, and this test fails until they are updated
// (`npm run api:update`), so no public change slips through unseen.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';

const run = promisify(execFile);

describe('API reports', () => {
  it('every entry’s report matches its built declarations', async () => {
    const result = await run(process.execPath, [join(REPO_ROOT, 'scripts/api-report.mjs'), '--check'], { cwd: REPO_ROOT }).then(
      (done) => ({ code: 0, stderr: done.stderr }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code ?? 1, stderr: err.stderr ?? '' }),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
