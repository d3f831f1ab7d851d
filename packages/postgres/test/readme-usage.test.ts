/**
 * The README's usage block, run as pasted: copied verbatim into an ES module beside the repository's
 * node_modules (so `@jobhook/*` resolve to the built packages, as in an app), run by `node` in a
 * folder holding `service-public.pem` with `DATABASE_URL` set, against a real PostgreSQL. A few lines
 * appended after the block deliver one signed webhook twice through the `receiver` it made and print
 * what a user would look at: the answers and the rows of `job_results`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type PostgresServer } from './helpers/postgres-server.js';

const REPO = resolve(import.meta.dirname, '../../..');
/** Inside the repository, so the block's imports resolve through its node_modules; gitignored with it. */
const SCRATCH = join(REPO, 'node_modules', '.cache', 'jobhook-readme-snippets');

/** The code block after `<!-- run-as-pasted:<name> … -->` in `readme`. */
function block(readme: string, name: string): string {
  const text = readFileSync(readme, 'utf8');
  const match = new RegExp(`^<!-- run-as-pasted:${name}\\b[^\\n]*-->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(text);
  if (match?.[1] === undefined) throw new Error(`no run-as-pasted:${name} block in ${readme}`);
  return match[1];
}

/** Appended after the block: two deliveries of one job, then the rows; the pool is ended so node exits. */
const HARNESS = `
const delivery = JSON.parse(process.env.DELIVERY);
const answers = [];
for (let i = 0; i < 2; i++) {
  const answer = await receiver.handle({ ...delivery, rawBody: Buffer.from(delivery.rawBody, 'base64') });
  answers.push([answer.status, JSON.parse(answer.body)]);
}
const { rows } = await pool.query('SELECT job_id, status FROM job_results');
console.log(JSON.stringify({ answers, rows }));
await receiver.close();
await pool.end();
`;

let server: PostgresServer;
let work: string;

beforeAll(async () => {
  server = await startPostgresServer({ own: true });
  work = mkdtempSync(join(tmpdir(), 'jobhook-pg-readme-'));
  mkdirSync(SCRATCH, { recursive: true });
});

afterAll(async () => {
  await server?.dispose();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the PostgreSQL usage block of the README', () => {
  it('runs as pasted on an empty database: one row for the job, the second delivery a duplicate', async () => {
    const keys = createTestKeyPair();
    writeFileSync(join(work, 'service-public.pem'), keys.publicKeyPem);
    const request = buildSignedRequest({ status: 'success' }, { privateKey: keys.privateKey });
    const file = join(SCRATCH, `postgres-usage-${process.pid}.mjs`);
    writeFileSync(file, block(resolve(import.meta.dirname, '../README.md'), 'postgres-usage') + HARNESS);
    try {
      const delivery = { method: request.method, headers: request.headers, rawBody: Buffer.from(request.rawBody).toString('base64') };
      const { code, stdout, stderr } = await runNode(file, work, { DATABASE_URL: server.url, DELIVERY: JSON.stringify(delivery) });
      expect(code, stderr).toBe(0);
      const { answers, rows } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as {
        answers: [number, { duplicate?: boolean }][];
        rows: { job_id: string; status: string }[];
      };
      expect(answers.map(([status, body]) => [status, body.duplicate])).toEqual([
        [200, false],
        [200, true],
      ]);
      expect(rows).toEqual([{ job_id: request.event.job_id.toLowerCase(), status: 'success' }]);
    } finally {
      rmSync(file, { force: true });
    }
  });
});

function runNode(file: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [file], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
