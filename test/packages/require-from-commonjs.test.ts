/**
 * A CommonJS app can `require()` every receiving package with no flag: the packages ship ESM only and
 * rely on require(esm), on by default from Node 20.19 (the `engines` floor). A second CJS build would
 * give two JobhookError classes, so the app also checks that errors thrown inside the adapters pass
 * core's `isJobhookError` and that `require` and `import` share one copy.
 *
 * The script runs in its own temp directory outside the repository, as a user's app would, with
 * `node_modules` linked to the repository's (so the packages resolve to their BUILT dist through the
 * exports maps: `npm test` builds before vitest).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures/require-packages.cjs');
const REQUIRED = ['core', 'express', 'koa', 'fastify', 'client'];

interface Thrown {
  threw: boolean;
  isJobhookError?: boolean;
  instanceOfCore?: boolean;
  code?: string;
}

interface AppReport {
  types: Record<string, string>;
  oneCopy: boolean;
  errors: Record<string, Thrown>;
}

let app: string;

beforeAll(() => {
  const missing = REQUIRED.filter((name) => !existsSync(resolve(REPO, `packages/${name}/dist/index.js`)));
  if (missing.length > 0) {
    throw new Error(`not built: ${missing.join(', ')}; run \`npm run build\` first`);
  }
  app = mkdtempSync(join(tmpdir(), 'jobhook-cjs-'));
  symlinkSync(resolve(REPO, 'node_modules'), join(app, 'node_modules'), 'dir');
  copyFileSync(SCRIPT, join(app, 'app.cjs'));
});

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('a CommonJS app', () => {
  it('runs on a Node that has require(esm) on by default (>= 20.19, the engines floor)', () => {
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    expect(major > 20 || (major === 20 && minor >= 19), `node ${process.versions.node}`).toBe(true);
  });

  it('requires core, its /redis, /testing, /sign, /json, /canonical and /diagnosis, express, koa, fastify and client, and sees one JobhookError', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['app.cjs'], { cwd: app });
    const report = JSON.parse(stdout) as AppReport;

    expect(report.types).toEqual({
      createReceiver: 'function',
      createRedisStore: 'function',
      createTestKeyPair: 'function',
      signPayload: 'function',
      rawJson: 'function',
      canonicalize: 'function',
      diagnoseDelivery: 'function',
    });
    expect(report.oneCopy).toBe(true);
    const expected: Thrown = { threw: true, isJobhookError: true, instanceOfCore: true, code: 'ERR_OPTION_INVALID' };
    expect(report.errors).toEqual({ express: expected, koa: expected, fastify: expected, client: expected });
  });
});
