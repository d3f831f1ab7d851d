// examples/express-receiver/server.mjs as a user runs it: a child process, driven over HTTP.
// Needs the built packages (npx tsc -b; the root `npm test` builds first).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedRequest } from '@jobhook/core/testing';
import { send } from './helpers.js';

const server = fileURLToPath(new URL('../../../examples/express-receiver/server.mjs', import.meta.url));
const privateKey = readFileSync(fileURLToPath(new URL('../../../examples/keys/demo.private.pem', import.meta.url)));

interface LogLine {
  msg?: string;
  job_id?: string;
  status?: string;
  port?: number;
}

let child: ChildProcess;
const lines: LogLine[] = [];
const stderrLines: string[] = [];
let url = '';

beforeAll(async () => {
  // No JOBHOOK_PUBLIC_KEY: the example's default, ../keys/demo.public.pem, must be found from any cwd.
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', WEBHOOK_PATH: '/hooks/test' };
  delete env['JOBHOOK_PUBLIC_KEY'];
  delete env['REDIS_URL'];
  delete env['DATABASE_URL'];
  child = spawn(process.execPath, [server], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Its stderr holds jobhook's warn lines: kept to assert on, and printed under the test that was
  // running, which shows them only if it fails.
  createInterface({ input: child.stderr! }).on('line', (line) => {
    console.error(line);
    stderrLines.push(line);
  });
  const listening = new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`example exited early with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as LogLine;
      lines.push(parsed);
      if (parsed.msg === 'listening' && typeof parsed.port === 'number') resolve(parsed.port);
    });
  });
  url = `http://127.0.0.1:${await listening}/hooks/test`;
});

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

const handledLines = (jobId: string) => lines.filter((l) => l.msg === 'job handled' && l.job_id === jobId);

describe('examples/express-receiver', () => {
  it('handles a signed webhook and logs one "job handled" line for it', async () => {
    const request = buildSignedRequest({ status: 'success' }, { privateKey });
    const res = await send(url, request);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, job_id: request.event.job_id, duplicate: false });
    await expect
      .poll(() => handledLines(request.event.job_id))
      .toEqual([expect.objectContaining({ msg: 'job handled', job_id: request.event.job_id, status: 'success' })]);

    const again = await send(url, request);
    expect(again.body.duplicate).toBe(true);
    const fail = buildSignedRequest({ status: 'fail' }, { privateKey });
    expect((await send(url, fail)).status).toBe(200);
    await expect.poll(() => handledLines(fail.event.job_id)).toHaveLength(1);
    expect(handledLines(request.event.job_id)).toHaveLength(1);
  });

  it('answers 401 to a tampered body, handles nothing and logs the refusal as a warn line on stderr', async () => {
    const request = buildSignedRequest({ output: { text: 'pay 10' } }, { privateKey });
    const res = await send(url, { headers: request.headers, body: Buffer.from(request.body.toString().replace('10', '99')) });
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('ERR_SIGNATURE_INVALID');
    expect(handledLines(request.event.job_id)).toEqual([]);
    await expect
      .poll(() => stderrLines.map((line) => JSON.parse(line) as Record<string, unknown>))
      .toContainEqual(expect.objectContaining({ level: 40, kind: 'rejected', status: 401, code: 'ERR_SIGNATURE_INVALID' }));
  });

  it('serves its other routes after express.json()', async () => {
    const res = await fetch(new URL('/healthz', url));
    expect(await res.json()).toEqual({ ok: true });
  });

  it('exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
