/**
 * `npm run demo -- --keep-open` (`node examples/demo/demo.mjs --keep-open` over the BUILT packages):
 * after its checks the service, its web page and the receiver stay up, the page's address and the
 * key printed, until Ctrl-C (SIGINT); then everything it started stops and it exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDemoBuilt, groupAlive, killDemoGroups, spawnDemo } from '../helpers/demo-process.js';

beforeAll(assertDemoBuilt);
afterAll(killDemoGroups);

describe('demo --keep-open', () => {
  it('leaves the service and its page up, address printed, until SIGINT; then exits 0 leaving nothing behind', async () => {
    // Its own process group: "nothing left behind" covers the receiver child too.
    const { child, group } = spawnDemo(['--keep-open']);
    let stdout = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const opened = new Promise<string>((resolveOpen, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString('utf8');
        if (/receiver URL: +\S+/.test(stdout)) resolveOpen(stdout);
      });
      void exited.then((code) => reject(new Error(`the demo exited ${code} without staying open:\n${stdout}`)));
    });
    const banner = await opened;
    const page = /dashboard: +(http:\/\/\S+\/dashboard\/)/.exec(banner)![1]!;
    const key = /inference key: +(\S+)/.exec(banner)![1]!;

    const receiverUrl = /receiver URL: +(http:\/\/\S+)/.exec(banner)![1]!;
    const html = await fetch(page);
    expect(html.status).toBe(200);
    const text = await html.text();
    expect(text).toContain('/dashboard/main.js');
    // The page's test-job form starts with the demo's receiver (dashboardReceiver).
    expect(text).toContain(`<body data-receiver="${receiverUrl}">`);
    // The demo's jobs are there for the page to show, with the key it printed.
    const list = await fetch(new URL('/v3/universal-ai/async?delivery=delivered', page), { headers: { authorization: `Bearer ${key}` } });
    expect(list.status).toBe(200);
    const { jobs } = (await list.json()) as { jobs: unknown[] };
    expect(jobs.length).toBeGreaterThan(0);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stdout).toContain('stopping the receiver and the service');
    expect(stdout).toMatch(/✓ all \d+ checks passed/);
    // The receiver child is stopped by the demo: the group empties (a hang fails at the test timeout).
    await expect.poll(() => groupAlive(group)).toBe(false);
  });
});
