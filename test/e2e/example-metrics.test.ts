// Done-when of the receiver metrics: each example receiver app (a child process, `node server.mjs`)
// is sent webhooks by `jobhook send` (the built CLI, spawned as a user runs it): new events, their
// duplicates, and events signed with a key the receiver does not know. Its GET /metrics then counts
// them as handled, duplicate and rejected. Child processes run the built packages: `npx tsc -b` first.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestKeyPair } from '@jobhook/core/testing';
import { sampleSum } from '../../packages/core/test/helpers/prometheus-text.js';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';
import { EXAMPLE_FRAMEWORKS, startExampleReceiver, type ExampleReceiver } from '../helpers/e2e-example-receiver.js';

const CLI_BIN = join(REPO_ROOT, 'packages/cli/bin/jobhook.js');
const DEMO_PUBLIC = join(REPO_ROOT, 'examples/keys/demo.public.pem');
const DEMO_PRIVATE = join(REPO_ROOT, 'examples/keys/demo.private.pem');
const EVENTS = 3;
const DUPLICATES = 2;
const FORGED = 2;

/** `jobhook send …`: exit code and the parsed JSON lines it printed (one per delivery, then the summary). */
function jobhookSend(args: readonly string[]): Promise<{ code: number | null; lines: Record<string, unknown>[]; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, 'send', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        err,
        lines: out
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      }),
    );
  });
}

let tmp: string;
let strangerKey: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'jobhook-metrics-'));
  // Not the key pair the examples verify with, but of its size (3072 bits): its signatures are refused
  // as invalid (401 ERR_SIGNATURE_INVALID), not as malformed.
  strangerKey = join(tmp, 'stranger.private.pem');
  await writeFile(strangerKey, createTestKeyPair(3072).privateKeyPem);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe.each(EXAMPLE_FRAMEWORKS)('%s example receiver: GET /metrics after jobhook send', (framework) => {
  let receiver: ExampleReceiver;

  beforeAll(async () => {
    receiver = await startExampleReceiver({ framework, publicKeyPath: DEMO_PUBLIC });
  });
  afterAll(async () => {
    expect(await receiver.stop()).toBe(0);
  });

  test(`counts ${EVENTS} handled, ${EVENTS * DUPLICATES} duplicate and ${FORGED} rejected requests`, async () => {
    const good = await jobhookSend([
      '--url',
      receiver.webhookUrl,
      '--private-key',
      DEMO_PRIVATE,
      '--count',
      String(EVENTS),
      '--duplicates',
      String(DUPLICATES),
    ]);
    expect(good.err).toBe('');
    expect(good.code).toBe(0);
    const forged = await jobhookSend(['--url', receiver.webhookUrl, '--private-key', strangerKey, '--count', String(FORGED)]);
    expect(forged.code).toBe(1); // every answer was a 401
    expect(forged.lines.filter((l) => l['code'] === 'ERR_SIGNATURE_INVALID')).toHaveLength(FORGED);

    const res = await fetch(`${receiver.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const total = 'jobhook_webhooks_total';
    expect(sampleSum(text, total, { outcome: 'handled', status: '200' })).toBe(EVENTS);
    expect(sampleSum(text, total, { outcome: 'duplicate', status: '200' })).toBe(EVENTS * DUPLICATES);
    expect(sampleSum(text, total, { outcome: 'rejected', status: '401', code: 'ERR_SIGNATURE_INVALID' })).toBe(FORGED);
    expect(sampleSum(text, total)).toBe(EVENTS + EVENTS * DUPLICATES + FORGED);
    expect(sampleSum(text, 'jobhook_webhook_duration_seconds_count')).toBe(EVENTS + EVENTS * DUPLICATES + FORGED);
    expect(receiver.handled).toHaveLength(EVENTS);
  });
});
