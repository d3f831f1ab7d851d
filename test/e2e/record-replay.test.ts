// Real deliveries recorded and replayed, as a user does it: the reference service (`jobhook serve`, the
// BUILT binary) delivers three jobs to the Express example app started with JOBHOOK_RECORD_DIR; the
// recordings are replayed with `jobhook replay` into a fresh Express app (all handled), then again
// (all duplicates); one recording is verified by the Python verifier the sender's tests use (a
// Python client of the service); one is loaded as a test fixture with `@jobhook/core/testing`.
// Build first: `npx tsc -b`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, silentLogger, type AsyncJobCompletedEvent } from '@jobhook/core';
import { deliverRecording, loadRecording } from '@jobhook/core/testing';
import { startPythonVerifier } from '../../packages/sender/test/helpers/delivery-python.js';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';
import { startExampleReceiver, type ExampleReceiver } from '../helpers/e2e-example-receiver.js';
import { createSenderApi, type SenderApi } from '../helpers/e2e-sender-api.js';
import { waitUntil } from '../helpers/e2e-wait.js';

const BIN = join(REPO_ROOT, 'packages/cli/dist/bin.js');
const DEMO_PRIVATE = join(REPO_ROOT, 'examples/keys/demo.private.pem');
const DEMO_PUBLIC = join(REPO_ROOT, 'examples/keys/demo.public.pem');
const TOKEN = `jh_inf_${'r'.repeat(32)}`;
const MODEL = 'ocr/ocr_async/simulated';
const WAIT_MS = 20_000;

let tmp: string;
let recordDir: string;
let serveChild: ChildProcessWithoutNullStreams | undefined;
let api: SenderApi;
const apps: ExampleReceiver[] = [];

/** Spawns `jobhook serve` (in a temporary working directory) and resolves with its base URL once its banner is printed. */
function serve(args: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: tmp });
  serveChild = child;
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url !== undefined && out.includes('Stop with')) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${String(code)} before its banner: ${out}\n${err}`)));
  });
}

/** Spawns `jobhook replay ...args`; resolves with its exit code and output lines. */
function replay(args: readonly string[]): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; err: string }> {
  const child = spawn(process.execPath, [BIN, 'replay', ...args], { cwd: tmp });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        err,
        lines: out
          .trimEnd()
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      }),
    );
  });
}

const recordingFiles = (): string[] =>
  readdirSync(recordDir)
    .filter((f) => /^delivery-.+\.json$/.test(f))
    .sort()
    .map((f) => join(recordDir, f));

let jobIds: string[] = [];

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b)`);
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-record-replay-'));
  recordDir = join(tmp, 'recordings');
  const recorder = await startExampleReceiver({ framework: 'express', publicKeyPath: DEMO_PUBLIC, env: { JOBHOOK_RECORD_DIR: recordDir } });
  apps.push(recorder);
  const baseUrl = await serve([
    '--private-key',
    DEMO_PRIVATE,
    '--api-key',
    TOKEN,
    '--allow-insecure-receivers',
    '--allow-receiver',
    '127.0.0.0/8',
    '--job-delay-ms',
    '0',
    '--no-dashboard',
  ]);
  api = createSenderApi(baseUrl, TOKEN);
  // Numbers as a client in another language writes them: the signed bytes hold `1.0` and 2**70.
  for (const seq of [1, 2, 3]) {
    jobIds.push(
      await api.submit(
        `{"model":"${MODEL}","input":{"file":"https://files.example/${seq}.pdf"},"webhook_receiver":${JSON.stringify(recorder.webhookUrl)},` +
          `"user_webhook_parameters":{"seq":${seq},"ratio":1.0,"big":1180591620717411303424,"name":"Zoë 東京"}}`,
      ),
    );
  }
  for (const id of jobIds) expect((await api.waitForFinalDelivery(id, WAIT_MS)).delivery).toBe('delivered');
  await recorder.waitForHandled(jobIds, WAIT_MS);
  await waitUntil(() => (recordingFiles().length === 3 ? true : undefined), {
    timeoutMs: WAIT_MS,
    what: () => `3 recordings in ${recordDir} (${recordingFiles().length} there)`,
  });
  jobIds = jobIds.map((id) => id.toLowerCase());
}, 120_000);

afterAll(async () => {
  serveChild?.kill('SIGTERM');
  for (const app of apps) await app.stop();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

describe('record and replay real deliveries', () => {
  it('the Express example recorded the three deliveries: 0600 files, the answers, the service’s headers and nothing else', () => {
    const recordings = recordingFiles().map((f) => JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>);
    expect(recordings.map((r) => r['job_id']).sort()).toEqual([...jobIds].sort());
    for (const [i, r] of recordings.entries()) {
      expect(r).toMatchObject({ method: 'POST', status: 200, kind: 'handled' });
      expect(statSync(recordingFiles()[i]!).mode & 0o777).toBe(0o600);
      const headers = r['headers'] as Record<string, string>;
      expect(headers['x-service-signature']).toMatch(/^[0-9a-f]+$/);
      // Headers outside the allow-list (Host, Connection, ...) keep their name only.
      for (const [name, value] of Object.entries(headers)) {
        if (!['content-type', 'content-length', 'user-agent'].includes(name) && !name.startsWith('x-service-'))
          expect(value).toBe('[dropped]');
      }
    }
  });

  it('jobhook replay into a fresh Express app: all handled; again: all duplicates; each job handled once', async () => {
    const fresh = await startExampleReceiver({ framework: 'express', publicKeyPath: DEMO_PUBLIC });
    apps.push(fresh);
    const first = await replay([recordDir, '--url', fresh.webhookUrl]);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.lines.map((l) => [l['status'], l['duplicate']])).toEqual([
      [200, false],
      [200, false],
      [200, false],
    ]);
    expect(first.lines.map((l) => String(l['jobId'])).sort()).toEqual([...jobIds].sort());
    await fresh.waitForHandled(jobIds, WAIT_MS);

    const again = await replay([...recordingFiles(), '--url', fresh.webhookUrl]);
    expect(again.code).toBe(0);
    expect(again.lines.map((l) => [l['status'], l['duplicate']])).toEqual([
      [200, true],
      [200, true],
      [200, true],
    ]);
    for (const id of jobIds) expect(fresh.handledCount(id)).toBe(1);
  });

  it('a recording verifies in Python, as the service’s Python clients verify: the bytes are the signed ones', async () => {
    const python = await startPythonVerifier(createPublicKey(readFileSync(DEMO_PUBLIC)).export({ type: 'spki', format: 'pem' }).toString());
    try {
      const recording = loadRecording(recordingFiles()[0]!);
      const verdict = await python.verify('recording', recording.body, String(recording.headers['x-service-signature']));
      expect(verdict).toMatchObject({ ok: true });
      // The signed bytes hold the numbers as the client wrote them.
      expect(verdict.user_parameters).toContain('"ratio": 1.0');
      expect(verdict.user_parameters).toContain('1180591620717411303424');
    } finally {
      await python.close();
    }
  });

  it('a recording as a test fixture: loadRecording + deliverRecording hand the event to a handler, clock pinned', async () => {
    const recording = loadRecording(recordingFiles()[0]!);
    const events: AsyncJobCompletedEvent[] = [];
    const receiver = createReceiver({
      publicKeys: readFileSync(DEMO_PUBLIC),
      logger: silentLogger,
      onEvent: (event) => void events.push(event),
    });
    try {
      const answer = await deliverRecording(receiver, recording);
      expect(answer.status).toBe(200);
      expect(events.map((e) => e.job_id.toLowerCase())).toEqual([recording.outcome.jobId]);
      expect(events[0]!.user_parameters).toMatchObject({ name: 'Zoë 東京' });
    } finally {
      await receiver.close();
    }
  });
});
