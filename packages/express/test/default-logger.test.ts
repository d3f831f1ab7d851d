// The receiver's default logger, as a user meets it: an Express app in a child process that passes
// no logger, its stderr read as pino lines. Needs the built packages (the root `npm test` builds).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const keys = createTestKeyPair();

// Two routes with the mistakes the default logger is for: a handler that throws, and a JSON body
// parser mounted before the middleware.
const app = `
import express from 'express';
import { createExpressMiddleware } from '@jobhook/express';
const publicKeys = process.env.PUBLIC_KEY;
const app = express();
app.post('/throws', createExpressMiddleware({ publicKeys, onEvent: () => { throw new Error('orders table is locked'); } }));
app.post('/parsed', express.json(), createExpressMiddleware({ publicKeys, onEvent: () => {} }));
const server = app.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.on('SIGTERM', () => server.close());
`;

interface PinoLine {
  level: number;
  msg: string;
  code?: string;
  err?: { type: string; message: string; stack: string };
}

describe('the default logger (no logger option)', () => {
  it('writes a throwing handler and a body parsed before the middleware to stderr, one pino JSON line each', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', app], {
      cwd: root,
      env: { ...process.env, PUBLIC_KEY: keys.publicKeyPem },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await expect.poll(() => /^\d+\n/.test(stdout), { timeout: 15_000 }).toBe(true);
      const base = `http://127.0.0.1:${stdout.trim()}`;
      const request = buildSignedRequest({ status: 'success' }, { privateKey: keys.privateKey });
      const thrown = await fetch(`${base}/throws`, request);
      expect(thrown.status).toBe(500);
      // What the sender sees keeps the handler's message to ourselves.
      expect(await thrown.text()).not.toContain('orders table');
      const parsed = await fetch(`${base}/parsed`, request);
      expect(parsed.status).toBe(500);
      expect(((await parsed.json()) as { error: { code: string } }).error.code).toBe('ERR_BODY_ALREADY_PARSED');

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as PinoLine);
      expect(lines.map((l) => [l.level, l.code])).toEqual([
        [50, 'ERR_HANDLER_FAILED'],
        [50, 'ERR_BODY_ALREADY_PARSED'],
      ]);
      const [handler, setup] = lines as [PinoLine, PinoLine];
      expect(handler.err?.message).toBe('orders table is locked');
      expect(handler.err?.stack).toContain('orders table is locked');
      expect(setup.msg).toMatch(/mount the webhook route before the parser|body parser/i);
      // The line is whole: the fix the message gives ends the sentence, and the sentence ends the line.
      expect(setup.msg).toContain('or keep the bytes with express.json({ verify: captureRawBody }) (captureRawBody from @jobhook/express)');
      expect(setup.msg).toMatch(/; one line per code per minute$/);
      // The signature and the body never reach the log.
      expect(stderr).not.toContain(request.signature);
      expect(stderr).not.toContain('Hello');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
