import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildSignedRequest } from '@jobhook/core/testing';

// Runs the built example (npx tsc -b first; the root `npm test` builds).
const server = fileURLToPath(new URL('../../../examples/koa-receiver/server.mjs', import.meta.url));
const privateKey = readFileSync(fileURLToPath(new URL('../../../examples/keys/demo.private.pem', import.meta.url)), 'utf8');

describe('examples/koa-receiver', () => {
  it('handles a job once, ignores its duplicate, refuses a tampered one, exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [server], {
      env: { ...process.env, PORT: '0', WEBHOOK_PATH: '/hooks', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await expect.poll(() => stdout.includes('"msg":"listening"'), { timeout: 15_000 }).toBe(true);
      const listening = JSON.parse(stdout.split('\n').find((l) => l.includes('"msg":"listening"'))!);
      const url = `http://127.0.0.1:${listening.port}/hooks`;

      const request = buildSignedRequest({ status: 'success' }, { privateKey });
      const first = await fetch(url, request);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ ok: true, job_id: request.event.job_id, duplicate: false });
      const again = await fetch(url, request);
      expect(await again.json()).toEqual({ ok: true, job_id: request.event.job_id, duplicate: true });

      const failed = buildSignedRequest({ status: 'fail' }, { privateKey });
      expect((await fetch(url, failed)).status).toBe(200);

      const tampered = buildSignedRequest({}, { privateKey });
      const body = tampered.body.toString('utf8').replace('"success"', '"fail"');
      const refused = await fetch(url, { method: 'POST', headers: tampered.headers, body });
      expect(refused.status).toBe(401);
      expect((await fetch(url)).status).toBe(405);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const handled = stdout
        .split('\n')
        .filter((l) => l.includes('"msg":"job handled"'))
        .map((l) => JSON.parse(l));
      expect(handled.map((l) => [l.job_id, l.status])).toEqual([
        [request.event.job_id, 'success'],
        [failed.event.job_id, 'fail'],
      ]);
      // The default logger (stderr, pino lines): the two refusals at warn, one line each, nothing at error.
      const logged = stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { level: number; code: string });
      expect(logged.map((l) => [l.level, l.code])).toEqual([
        [40, 'ERR_SIGNATURE_INVALID'],
        [40, 'ERR_METHOD_NOT_ALLOWED'],
      ]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
