// The shell lines of the guides that a newcomer pastes first run as written, in a folder of the
// repository (so `npx jobhook` resolves as in a project that installed the CLI), with only the
// ports moved and the banner's key pasted:
// - docs/cli.md `guide:cli:by-hand`: a key pair, a body, its signature, verify one and a batch;
// - docs/reference-service.md `guide:reference-service:loop` then `…:submit`: `jobhook serve` in the
//   background, the wait for `service-public.pem` (no sleep), the README's Express quickstart as
//   `server.mjs` against it, and the curl that submits a job: the job's result reaches the
//   quickstart's `saveResult`. The quickstart's "your code" comes from the pack test's preload.
// Needs the packages built (`npx tsc -b`).
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../packages/core/test/helpers/redis-server.js';
import { assertBuilt, REPO_ROOT } from '../helpers/chaos-cluster.js';
import { waitUntil } from '../helpers/e2e-wait.js';
import { createShells, guideBlock, serveBanner, substitute } from '../helpers/guide-blocks.js';

const WAIT_MS = 30_000;
const PRELOAD = join(REPO_ROOT, 'test/packages/fixtures/quickstart-preload.cjs');
const run = promisify(execFile);
const shells = createShells();
let work: string;

beforeAll(() => {
  assertBuilt();
  work = join(REPO_ROOT, 'test/docs', `.guide-lines-${process.pid}`);
});

afterAll(async () => {
  await shells.stop();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** A fresh folder for one guide's lines. */
function folder(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

test('the CLI guide: keygen, sign, verify, canonicalize and a batch, as pasted', async () => {
  const dir = folder('cli');
  const { stdout } = await run('bash', ['-e', '-c', guideBlock(join(REPO_ROOT, 'docs/cli.md'), 'guide:cli:by-hand')], { cwd: dir });
  const lines = stdout.trim().split('\n');
  const json = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
  const jobId = '3f6c2a9e-1b7d-4c55-9a0e-2f1d8c7b6a54';
  expect(json).toEqual([
    expect.objectContaining({ ok: true, job_id: jobId, profile: 'python' }),
    expect.objectContaining({ id: 'first', ok: true, job_id: jobId }),
  ]);
  // The digest line is sha256sum's, over the canonical bytes (two-space indentation, sorted keys).
  expect(lines).toContainEqual(expect.stringMatching(/^[0-9a-f]{64} {2}-$/));
  expect(readFileSync(join(dir, 'service-public.pem'), 'utf8')).toContain('BEGIN PUBLIC KEY');
});

test('the dev loop: serve, wait for its key, the README quickstart against it, a job submitted with curl reaches saveResult', async () => {
  const dir = folder('loop');
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const quickstart = /^<!-- quickstart:express:esm\b[^\n]*-->\n```[a-z]*\n([\s\S]*?)^```$/m.exec(readme)?.[1];
  expect(quickstart, 'the Express quickstart in README.md').toBeDefined();
  writeFileSync(join(dir, 'server.mjs'), quickstart!);
  const [servicePort, receiverPort] = [await freePort(), await freePort()];
  const guide = join(REPO_ROOT, 'docs/reference-service.md');
  const loop = shells.start(
    substitute(guideBlock(guide, 'guide:reference-service:loop'), [
      [/\b8080\b/, String(servicePort)],
      [/\b3000\b/, String(receiverPort)],
    ]),
    dir,
    // The quickstart's saveResult and markFailed, reporting each call as a JSON line.
    { NODE_OPTIONS: `--require ${PRELOAD}` },
  );
  const field = await serveBanner(loop, WAIT_MS);
  await waitUntil(
    () => {
      if (loop.exited) throw new Error(`the loop ended:\n${loop.out}\n${loop.err}`);
      return loop.out.includes(`"port":${receiverPort}`) ? true : undefined;
    },
    { timeoutMs: WAIT_MS, what: () => `the quickstart listening on ${receiverPort}; so far:\n${loop.out}\n${loop.err}` },
  );

  const submit = substitute(guideBlock(guide, 'guide:reference-service:submit'), [
    [/^JOBHOOK_API_KEY=jh_inf_…/m, `JOBHOOK_API_KEY=${field('inference key')}`],
    [/\b8080\b/, String(servicePort)],
    [/\b3000\b/, String(receiverPort)],
  ]);
  const { stdout } = await run('bash', ['-e', '-c', submit], { cwd: dir });
  const jobId = (JSON.parse(stdout) as { job_id: string }).job_id;
  await waitUntil(() => (loop.out.includes(`{"call":"saveResult","jobId":"${jobId}"`) ? true : undefined), {
    timeoutMs: WAIT_MS,
    what: () => `saveResult for ${jobId}; so far:\n${loop.out}\n${loop.err}`,
  });
  // The key the quickstart read is the one the service wrote into this folder, and its state folder is here too.
  expect(field('public key')).toBe(join(dir, 'service-public.pem'));
});
