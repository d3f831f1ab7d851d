/**
 * `npm run demo` as a user runs it: `node examples/demo/demo.mjs` over the BUILT packages, with the
 * Fastify example receiver as its child process. Needs `npx tsc -b` first (`npm test` builds before
 * vitest). The demo runs in its own process group, so "nothing left behind" covers every process
 * it started, whatever it was.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { assertDemoBuilt, groupAlive, killDemoGroups, spawnDemo } from '../helpers/demo-process.js';

/**
 * A hang guard, not a speed check (the demo takes a few seconds on an idle machine, and how long it
 * takes on a busy one is not asserted): past this the demo's process group is killed, so a hung
 * demo fails on its signal, with its output, and leaves nothing behind.
 */
const DEMO_LIMIT_MS = 60_000;

interface DemoRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Process group id of the demo and everything it started. */
  group: number;
}

afterAll(killDemoGroups);

function runDemo(): Promise<DemoRun> {
  return new Promise((resolvePromise, reject) => {
    const { child, group } = spawnDemo();
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const limit = setTimeout(() => process.kill(-group, 'SIGKILL'), DEMO_LIMIT_MS);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(limit);
      resolvePromise({ code, signal, stdout, stderr, group });
    });
  });
}

describe('npm run demo', () => {
  it('runs the whole loop, passes every check and exits 0, leaving no process behind', async () => {
    assertDemoBuilt();
    const run = await runDemo();
    const output = `${run.stdout}\n${run.stderr}`;

    expect(run.signal, output).toBeNull();
    expect(run.code, output).toBe(0);
    expect(run.stdout).not.toContain('✗');
    expect(run.stdout).toMatch(/✓ all \d+ checks passed in [\d.]+ s/);

    // Started with the local-receiver exception spelled out.
    expect(run.stdout).toMatch(/✓ reference service \(@jobhook\/sender\) at http:\/\/127\.0\.0\.1:\d+/);
    expect(run.stdout).toContain('receiverAllowlist ["127.0.0.0/8"]');
    const pid = Number(/Fastify example receiver .*, pid (\d+), at http:\/\/127\.0\.0\.1:\d+\/webhooks\/jobs/.exec(run.stdout)?.[1]);
    expect(pid).toBeGreaterThan(0);

    // Each webhook verified, with its profile, and handled once; the retried one too.
    expect(run.stdout).toMatch(/✓ A {2}200: verified \(profile python\), handled .*status success/);
    expect(run.stdout).toMatch(/✓ B {2}200: verified \(profile python\), handled .*status fail/);
    expect(run.stdout).toMatch(/✓ C {2}503 \(tap outage\) → retry → 200: verified \(profile python\), handled/);
    expect(run.stdout).toContain('"weight_kg": 1.0');
    expect(run.stdout).toContain(`"big": ${2n ** 70n}`);
    // Duplicate acknowledged without a second handling; tampered body refused.
    expect(run.stdout).toMatch(/redelivery round 1: verified \(profile python\), answered 200 .*"duplicate":true.*handler not run again/);
    expect(run.stdout).toMatch(/401 ERR_SIGNATURE_INVALID/);
    // ...and diagnosed: the receiver's log cause, then the offline diagnosis of it and of a re-serialized body.
    expect(run.stdout).toMatch(/✓ its log line says cause "body-mismatch"; diagnosed \(jobhook doctor\): body-modified: /);
    expect(run.stdout).toMatch(/✓ A's body after JSON\.parse \+ JSON\.stringify .* diagnosed: body-reserialized; numbers /);
    expect(run.stdout).toMatch(/handler ran once per job \(A 1, B 1, C 1\)/);
    // Polling, delivery log, naive vs exact, the repository's vectors (their absence is a failure).
    expect(run.stdout).toMatch(/getJob → "processing"; pollJob → "success"/);
    expect(run.stdout).toMatch(/round 0 attempt 1: 503 retry[\s\S]*round 0 attempt 2: 200 delivered/);
    expect(run.stdout).toMatch(/JSON\.parse \+ sorted JSON\.stringify.*does not verify/);
    expect(run.stdout).toMatch(/✓ (\d+)\/\1 vectors agree/);
    expect(run.stdout).toMatch(/receiver \(pid \d+\) stopped with SIGTERM, exit code 0/);

    // Nothing left: not the receiver, nor anything else of the demo's process group.
    expect(groupAlive(run.group)).toBe(false);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  }, 90_000);
});
