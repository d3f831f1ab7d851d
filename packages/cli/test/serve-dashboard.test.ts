/**
 * `jobhook serve` (the BUILT binary, spawned) and its web page: the banner names the page's address,
 * which answers the page; `--no-dashboard` serves none.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, '../dist/bin.js');
const REPO = resolve(HERE, '../../..');

/** Runs `jobhook serve --port 0 …` until its banner is out, hands the banner to `use`, then stops it with SIGTERM. */
async function withServe(args: readonly string[], use: (banner: string) => Promise<void>): Promise<number | null> {
  // --ephemeral: these runs keep no state (the tests start `serve` in parallel, in the repository).
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--ephemeral', ...args], { cwd: REPO });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    let out = '';
    const banner = await new Promise<string>((resolveBanner, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (out.includes('Stop with')) resolveBanner(out);
      });
      void exited.then((code) => reject(new Error(`serve exited ${code} before its banner`)));
    });
    await use(banner);
  } finally {
    child.kill('SIGTERM');
  }
  return exited;
}

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b)`);
});

describe('jobhook serve and the dashboard', () => {
  it('prints the page address, which serves the page under its CSP', async () => {
    const code = await withServe([], async (banner) => {
      const page = /dashboard:\s+(http:\/\/\S+)/.exec(banner)?.[1];
      expect(page).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/$/);
      const res = await fetch(page!);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await res.text()).toContain('<script type="module" src="/dashboard/main.js">');
    });
    expect(code).toBe(0);
  });

  it('--no-dashboard: no address in the banner, and /dashboard/ is 404', async () => {
    const code = await withServe(['--no-dashboard'], async (banner) => {
      expect(banner).not.toContain('dashboard:');
      const baseUrl = /listening on (http:\/\/\S+)/.exec(banner)![1]!;
      expect((await fetch(`${baseUrl}/dashboard/`)).status).toBe(404);
    });
    expect(code).toBe(0);
  });

  it('--dashboard-receiver URL: the page carries it for its test-job form; a bad URL exits 2 naming the flag', async () => {
    const code = await withServe(['--dashboard-receiver', 'http://127.0.0.1:3000/webhooks/jobs'], async (banner) => {
      const page = /dashboard:\s+(http:\/\/\S+)/.exec(banner)![1]!;
      expect(await (await fetch(page)).text()).toContain('<body data-receiver="http://127.0.0.1:3000/webhooks/jobs">');
    });
    expect(code).toBe(0);
    const bad = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--ephemeral', '--dashboard-receiver', 'ftp://x.test/'], {
      cwd: REPO,
    });
    let stderr = '';
    bad.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    expect(await new Promise((r) => bad.on('exit', r))).toBe(2);
    expect(stderr).toContain('--dashboard-receiver must be an http:// or https:// URL');
  });
});
