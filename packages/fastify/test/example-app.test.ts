// examples/fastify-receiver/server.mjs as a child process, driven over HTTP with requests signed by
// the committed demo key. Needs the built packages (`npx tsc -b`; the root `npm test` builds first).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedRequest } from '@jobhook/core/testing';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const server = `${root}examples/fastify-receiver/server.mjs`;
const privateKey = readFileSync(`${root}examples/keys/demo.private.pem`);

let child: ChildProcess;
let stdout = '';
let stderr = '';
let url = '';

const lines = (): Array<Record<string, unknown>> =>
  stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const handledLines = (jobId: string): string[] => stdout.split('\n').filter((l) => l.includes('job handled') && l.includes(jobId));

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; stdout:\n${stdout}\nstderr:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  if (!existsSync(`${root}packages/fastify/dist/index.js`)) throw new Error('build first: npx tsc -b');
  child = spawn(process.execPath, [server], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', REDIS_URL: '', DATABASE_URL: '', WEBHOOK_PATH: '/hooks/jobs' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const listening = await waitFor('the listening line', () => lines().find((l) => l['msg'] === 'listening'));
  url = `http://127.0.0.1:${String(listening['port'])}/hooks/jobs`;
});

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

describe('examples/fastify-receiver', () => {
  it('prints one JSON listening line with the port', () => {
    const listening = lines().filter((l) => l['msg'] === 'listening');
    expect(listening).toHaveLength(1);
    expect(listening[0]!['port']).toEqual(expect.any(Number));
    expect(stderr).toBe('');
  });

  it('writes exactly one "job handled" line per job, none for the duplicate', async () => {
    const request = buildSignedRequest({ status: 'success' }, { privateKey });
    const first = await fetch(url, request);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ job_id: request.event.job_id, duplicate: false });
    await waitFor('the job handled line', () => (handledLines(request.event.job_id).length > 0 ? true : undefined));
    const line = JSON.parse(handledLines(request.event.job_id)[0]!);
    expect(line).toMatchObject({ msg: 'job handled', job_id: request.event.job_id, status: 'success' });

    const again = await fetch(url, request);
    expect(await again.json()).toMatchObject({ duplicate: true });
    const failed = buildSignedRequest({ status: 'fail' }, { privateKey });
    expect((await fetch(url, failed)).status).toBe(200);
    await waitFor('the fail line', () => (handledLines(failed.event.job_id).length > 0 ? true : undefined));
    expect(handledLines(request.event.job_id)).toHaveLength(1);
    expect(JSON.parse(handledLines(failed.event.job_id)[0]!)).toMatchObject({ status: 'fail' });
  });

  it('answers 401 to a tampered body, without a job handled line', async () => {
    const request = buildSignedRequest({ status: 'success' }, { privateKey });
    const tampered = Buffer.from(request.body.toString().replace('Hello', 'Jello'));
    const res = await fetch(url, { method: 'POST', headers: request.headers, body: tampered });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_SIGNATURE_INVALID');
    expect(handledLines(request.event.job_id)).toHaveLength(0);
  });

  it('exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines().some((l) => l['msg'] === 'shutting down')).toBe(true);
  });
});
