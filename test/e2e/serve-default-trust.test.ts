// The trust guide against `jobhook serve` as it starts with no accounts file (the BUILT binary): its two
// default organizations, each with an inference key in the banner. Organization one submits with
// @jobhook/client and its recipient secret to a receiver holding that secret, at a `localhost` URL (a
// name the service pins to loopback, without DNS); organization two aims a job at the same receiver.
// Build first: `npx tsc -b`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@jobhook/client';
import { createJsonLogger, createReceiver, type AsyncJobCompletedEvent, type Receiver } from '@jobhook/core';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';
import { createSenderApi, type DeliveriesView } from '../helpers/e2e-sender-api.js';

const BIN = join(REPO_ROOT, 'packages/cli/dist/bin.js');
const SECRET_ONE = 'organization-one-recipient-secret-0123456789';
const MODEL = 'ocr/ocr_async/simulated';
const WAIT_MS = 20_000;

let serveChild: ChildProcessWithoutNullStreams | undefined;
let server: Server | undefined;
let receiver: Receiver | undefined;
let banner = '';
const handled = new Map<string, AsyncJobCompletedEvent[]>();
const refused = new Map<string, string>();
/** The receiver's log lines, kept (and asserted on) rather than printed. */
const logs: Array<Record<string, unknown>> = [];

function field(name: string): string {
  const value = new RegExp(`${name}:\\s+(\\S+)`).exec(banner)?.[1];
  if (value === undefined) throw new Error(`no '${name}' in the banner:\n${banner}`);
  return value;
}

/** Spawns `jobhook serve --ephemeral` with the flags the guide gives and resolves once the banner is out. */
function serve(args: readonly string[]): Promise<void> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--ephemeral', ...args], { cwd: REPO_ROOT });
  serveChild = child;
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      banner += c.toString('utf8');
      if (banner.includes('Stop with')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${String(code)} before its banner: ${banner}\n${err}`)));
  });
}

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b)`);
  await serve(['--allow-insecure-receivers', '--allow-receiver', '127.0.0.0/8', '--job-delay-ms', '0']);
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void receiver!
        .handle({ method: req.method ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) })
        .then((answer) => res.writeHead(answer.status, answer.headers).end(answer.body));
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  serveChild?.kill('SIGTERM');
  server?.closeAllConnections();
  await new Promise<void>((r) => (server === undefined ? r() : server.close(() => r())));
  await receiver?.close();
});

describe('the trust guide against jobhook serve with its defaults', () => {
  it("organization two's job aimed at organization one's tagged receiver is refused 403; organization one's is handled once", async () => {
    const hookUrl = `http://localhost:${(server!.address() as AddressInfo).port}/webhooks/jobs`;
    receiver = createReceiver({
      publicKeys: readFileSync(field('public key')),
      recipientSecret: SECRET_ONE,
      recipientUrl: hookUrl,
      logger: createJsonLogger({ write: (line) => void logs.push(JSON.parse(line) as Record<string, unknown>) }),
      onEvent: (event) => void handled.set(event.job_id, [...(handled.get(event.job_id) ?? []), event]),
      onOutcome: (outcome) => {
        if (outcome.kind === 'rejected' && outcome.jobId !== undefined) refused.set(outcome.jobId, outcome.code ?? '');
      },
    });
    const baseUrl = /listening on (http:\/\/\S+)/.exec(banner)![1]!;
    const one = field('inference key');
    const two = field('other org key');
    expect(two).not.toBe(one);

    // Organization one, as the guide submits: the client tags each job for its receiver.
    const client = createClient({ baseUrl, apiKey: one, recipientSecret: SECRET_ONE });
    const { job_id: ours } = await client.submitJob({
      model: MODEL,
      input: { file: 'invoice.pdf' },
      webhook_receiver: hookUrl,
      user_webhook_parameters: { order_id: 'A-1001' },
    });
    // Organization two: its own client, without organization one's secret, aimed at the same URL.
    const foreign = createClient({ baseUrl, apiKey: two });
    const { job_id: theirs } = await foreign.submitJob({ model: MODEL, input: { file: 'invoice.pdf' }, webhook_receiver: hookUrl });

    const settled = (token: string, jobId: string): Promise<DeliveriesView> =>
      createSenderApi(baseUrl, token).waitForFinalDelivery(jobId, WAIT_MS);
    const oursDelivered = await settled(one, ours);
    expect(oursDelivered.delivery).toBe('delivered');
    // `localhost` was accepted at submission and delivered to (pinned to 127.0.0.1).
    expect(oursDelivered.attempts.map((a) => [a.url, a.status_code])).toEqual([[hookUrl, 200]]);
    const theirsRefused = await settled(two, theirs);
    expect(theirsRefused.delivery).toBe('rejected');
    expect(theirsRefused.attempts.map((a) => a.status_code)).toEqual([403]); // 4xx: the service does not retry
    expect(refused.get(theirs)).toBe('ERR_RECIPIENT_TAG_MISSING');
    expect(logs).toEqual([expect.objectContaining({ status: 403, code: 'ERR_RECIPIENT_TAG_MISSING', jobId: theirs })]);

    // Handled once, with the parameters as submitted (the tag taken out); the foreign job never.
    await createSenderApi(baseUrl, one).redeliver(ours);
    await expect.poll(() => receiver!.stats().duplicates).toBe(1);
    expect(handled.get(ours)).toHaveLength(1);
    expect(handled.get(ours)![0]!.user_parameters).toEqual({ order_id: 'A-1001' });
    expect(handled.has(theirs)).toBe(false);
    // Each organization sees its own jobs only.
    await expect(createSenderApi(baseUrl, two).deliveries(ours)).rejects.toThrow(/answered 404/);
  });
});
