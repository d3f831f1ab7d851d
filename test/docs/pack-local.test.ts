// `npm run pack:local` is the README's install step while the packages are not on the registry: it
// packs every publishable workspace and prints one `npm i` line per package. Here the script runs
// into a temporary folder (the packages built already, as `npm test` has them), every printed path
// is a tarball it wrote, and the Express line, pasted into a new app outside the repository,
// installs an app that imports @jobhook/express (and the core it brings) from the tarballs.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';
import { npmEnv } from '../helpers/npm-env.js';

const run = promisify(execFile);
let tmp: string;
let printed: string;

const publishable = readdirSync(join(REPO_ROOT, 'packages')).filter((dir) => {
  const file = join(REPO_ROOT, 'packages', dir, 'package.json');
  return existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { private?: boolean }).private !== true;
});

/** The printed `npm i …` line under `# <name>`. */
function installLine(name: string): string {
  const lines = printed.split('\n');
  const line = lines[lines.indexOf(`# ${name}`) + 1];
  expect(line, `a line for ${name} in:\n${printed}`).toMatch(/^npm i /);
  return line!;
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-pack-local-'));
  ({ stdout: printed } = await run(process.execPath, ['scripts/pack-local.mjs', '--out', join(tmp, 'packs')], {
    cwd: REPO_ROOT,
    env: npmEnv(),
  }));
}, 120_000);

afterAll(() => {
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

test('one install line per publishable package, naming only tarballs it wrote (absolute paths)', () => {
  expect(publishable.length).toBeGreaterThanOrEqual(9);
  for (const dir of publishable) {
    const name = (JSON.parse(readFileSync(join(REPO_ROOT, 'packages', dir, 'package.json'), 'utf8')) as { name: string }).name;
    const tarballs = installLine(name)
      .split(' ')
      .slice(2)
      .filter((arg) => arg.endsWith('.tgz'));
    expect(tarballs[0]).toBe(join(tmp, 'packs', `${name.replace('@', '').replace('/', '-')}-0.1.0.tgz`));
    for (const tarball of tarballs) expect(existsSync(tarball), tarball).toBe(true);
  }
  // An adapter brings the core it needs, and names its framework.
  expect(installLine('@jobhook/express')).toContain(join(tmp, 'packs', 'jobhook-core-0.1.0.tgz'));
  expect(installLine('@jobhook/express').split(' ').at(-1)).toBe('express');
});

test('the Express line, pasted into a new app, installs an app that imports the adapter', async () => {
  const app = join(tmp, 'app');
  await run('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true,"type":"module"}\n');
  const [, , ...specs] = installLine('@jobhook/express').split(' ');
  await run('npm', ['i', ...specs!, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, env: npmEnv() });
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', "const m = await import('@jobhook/express'); console.log(typeof m.createExpressMiddleware)"],
    { cwd: app },
  );
  expect(stdout.trim()).toBe('function');
  const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
  expect(lock.packages['node_modules/@jobhook/core']?.resolved).toMatch(/jobhook-core-0\.1\.0\.tgz$/);
}, 120_000);
