/**
 * examples/nextjs-route, the Next.js App Router route handler (`export const POST`, Node.js runtime),
 * as a user runs it: `next build` then `next start`, with NEXT_TELEMETRY_DISABLED=1, on the Next.js
 * of the runtime test workspace (test/runtimes, installed on first use; the example is not a root
 * workspace, so the root `npm ci` never installs Next). The example is copied into
 * test/runtimes/.work so it resolves its packages from that workspace, `@jobhook/core` being the
 * repository's build. A Python-signed delivery is handled once, a tampered one refused, and the
 * redelivery answered as a duplicate without running the handler again.
 *
 * Time budget (hang guards, not speed checks): `next build` 5 min, `next start` 1 min. Measured on
 * the 2-core machine: `next build` 12 s idle, 50 s at a load average of 13; `next start` under 1 s.
 */
import { execFile } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSignedDeliveries, type Delivery, type SignedDeliveries } from '../helpers/python-signed-deliveries.js';
import { startRuntimeServer, type RuntimeServer } from '../helpers/runtime-server.js';
import { ensureRuntimesWorkspace, INSTALL_TIMEOUT_MS, RUNTIMES_DIR, type RuntimesWorkspace } from '../helpers/runtimes-workspace.js';

const EXAMPLE = resolve(RUNTIMES_DIR, '../../examples/nextjs-route');
const APP = join(RUNTIMES_DIR, '.work/nextjs-route');
const BUILD_BUDGET_MS = 5 * 60_000;
/** For `next start` and the three requests. */
const START_BUDGET_MS = 60_000;
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: '1' };

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

let workspace: RuntimesWorkspace;
let deliveries: SignedDeliveries;
let server: RuntimeServer | undefined;

beforeAll(async () => {
  workspace = await ensureRuntimesWorkspace();
  deliveries = await makeSignedDeliveries();
}, INSTALL_TIMEOUT_MS);
afterAll(() => server?.stop());

async function post(url: string, delivery: Delivery): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  return { status: response.status, body: await response.json() };
}

/** The handler's own log lines (the example logs one JSON line per event it handles). */
function handledLines(stdout: string): unknown[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string })
    .filter((line) => line.msg === 'job webhook handled');
}

describe('examples/nextjs-route', () => {
  it('declares the versions of Next.js, React and TypeScript the test builds it with', () => {
    const example = JSON.parse(readFileSync(join(EXAMPLE, 'package.json'), 'utf8')) as Manifest;
    const runtimes = JSON.parse(readFileSync(join(RUNTIMES_DIR, 'package.json'), 'utf8')) as Manifest;
    const declared = { ...example.dependencies, ...example.devDependencies };
    delete declared['@jobhook/core'];
    for (const [name, version] of Object.entries(declared))
      expect({ name, version }).toEqual({ name, version: runtimes.dependencies?.[name] });
  });

  it(
    'builds with next build and, under next start, handles a signed delivery once and answers its redelivery as a duplicate',
    async () => {
      rmSync(APP, { recursive: true, force: true });
      cpSync(EXAMPLE, APP, { recursive: true, filter: (source) => !/[/\\](\.next|node_modules)$/.test(source) });
      await promisify(execFile)(workspace.bin('next'), ['build'], {
        cwd: APP,
        env: { ...process.env, ...NEXT_ENV },
        timeout: BUILD_BUDGET_MS,
        maxBuffer: 16 * 1024 * 1024,
      }).catch((err: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`next build failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      });

      server = await startRuntimeServer({
        command: workspace.bin('next'),
        args: ['start', '-H', '127.0.0.1', '-p', '0'],
        cwd: APP,
        env: { ...NEXT_ENV, JOBHOOK_PUBLIC_KEY: deliveries.publicKeyPem },
        port: (line) => {
          const found = /Local:\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
          return found === null ? undefined : Number(found[1]);
        },
      });
      const url = `${server.url}/api/webhooks/jobs`;
      const { jobId } = deliveries;

      expect(await post(url, deliveries.valid)).toEqual({ status: 200, body: { ok: true, job_id: jobId, duplicate: false } });
      expect(await post(url, deliveries.tampered)).toMatchObject({ status: 401, body: { error: { code: 'ERR_SIGNATURE_INVALID' } } });
      expect(await post(url, deliveries.duplicate)).toEqual({ status: 200, body: { ok: true, job_id: jobId, duplicate: true } });
      expect(handledLines(server.stdout())).toEqual([{ msg: 'job webhook handled', job_id: jobId, status: 'success' }]);
    },
    BUILD_BUDGET_MS + START_BUDGET_MS,
  );
});
