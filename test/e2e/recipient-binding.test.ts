// Recipient binding through the reference service, as two customers use it: `jobhook serve --config`
// (the BUILT binary) with organizations A and B, each with its own API key. The service signs every
// job with its one key, so B can aim a job at A's receiver and choose its output and parameters; A's
// receivers (core's pipeline over node:http, and the Express example app) hold A's recipient secret
// and must run A's handler only for A's jobs. Build first: `npx tsc -b`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@jobhook/client';
import { createJsonLogger, createReceiver, type AsyncJobCompletedEvent, type Receiver, type ReceiverOptions } from '@jobhook/core';
import { RECIPIENT_TAG_KEY, createRecipientTag } from '@jobhook/core/recipient';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';
import { startExampleReceiver, type ExampleReceiver } from '../helpers/e2e-example-receiver.js';
import { createSenderApi, type DeliveriesView, type SenderApi } from '../helpers/e2e-sender-api.js';

const BIN = join(REPO_ROOT, 'packages/cli/dist/bin.js');
const DEMO_PRIVATE = join(REPO_ROOT, 'examples/keys/demo.private.pem');
const DEMO_PUBLIC = join(REPO_ROOT, 'examples/keys/demo.public.pem');
const TOKEN_A = `jh_inf_${'a'.repeat(32)}`;
const TOKEN_B = `jh_inf_${'b'.repeat(32)}`;
const SECRET_A = 'org-a-recipient-secret-0123456789abcdef';
const SECRET_A_OLD = 'org-a-previous-secret-0123456789abcdef';
const SECRET_B = 'org-b-own-secret-0123456789abcdefghij';
const MODEL = 'ocr/ocr_async/simulated';
const WAIT_MS = 20_000;
const HOUR = 3_600_000;

/** One of A's receivers, on its own path of one local HTTP server. */
interface Hook {
  url: string;
  receiver: Receiver;
  /** Events the handler ran for, by job id. */
  handled: Map<string, AsyncJobCompletedEvent[]>;
  /** The refusal code of each refused job. */
  refused: Map<string, string>;
  /** Warnings of the rollout mode. */
  warnings: Array<Record<string, unknown>>;
}

let tmp: string;
let serveChild: ChildProcessWithoutNullStreams;
let server: Server;
let baseUrl: string;
let apiA: SenderApi;
let apiB: SenderApi;
const hooks = new Map<string, Hook>();
let origin: string;

function hook(path: string, options: Partial<ReceiverOptions>): Hook {
  const handled = new Map<string, AsyncJobCompletedEvent[]>();
  const refused = new Map<string, string>();
  const warnings: Array<Record<string, unknown>> = [];
  const receiver = createReceiver({
    publicKeys: readFileSync(DEMO_PUBLIC),
    logger: createJsonLogger({
      write: (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (String(entry['msg']).includes("recipientCheck: 'log'")) warnings.push(entry);
      },
    }),
    onEvent: (event) => void handled.set(event.job_id, [...(handled.get(event.job_id) ?? []), event]),
    onOutcome: (outcome) => {
      if (outcome.kind === 'rejected' && outcome.jobId !== undefined) refused.set(outcome.jobId, outcome.code ?? '');
    },
    ...options,
  });
  const entry = { url: `${origin}${path}`, receiver, handled, refused, warnings };
  hooks.set(path, entry);
  return entry;
}

/** Spawns `jobhook serve` and resolves with its base URL once the banner is printed. */
function serve(args: readonly string[]): Promise<string> {
  serveChild = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--ephemeral', ...args], { cwd: REPO_ROOT });
  let out = '';
  let err = '';
  serveChild.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  serveChild.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    serveChild.stdout.on('data', () => {
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url !== undefined && out.includes('Stop with')) resolve(url);
    });
    serveChild.once('exit', (code) => reject(new Error(`serve exited ${String(code)} before its banner: ${out}\n${err}`)));
  });
}

function orgKey(token: string, member: string) {
  return { id: randomUUID(), token, kind: 'inference', name: 'backend', member, balance: null, revoked: false };
}

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b)`);
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-recipient-'));
  const config = join(tmp, 'accounts.json');
  writeFileSync(
    config,
    JSON.stringify({
      organizations: [
        { id: 'org-a', members: ['ada@a.test'], keys: [orgKey(TOKEN_A, 'ada@a.test')] },
        { id: 'org-b', members: ['bob@b.test'], keys: [orgKey(TOKEN_B, 'bob@b.test')] },
      ],
    }),
  );
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = hooks.get(new URL(req.url ?? '/', 'http://x').pathname);
      if (target === undefined) return void res.writeHead(404).end();
      void target.receiver
        .handle({ method: req.method ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) })
        .then((answer) => res.writeHead(answer.status, answer.headers).end(answer.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  baseUrl = await serve([
    '--config',
    config,
    '--private-key',
    DEMO_PRIVATE,
    '--allow-insecure-receivers',
    '--allow-receiver',
    '127.0.0.0/8',
    '--job-delay-ms',
    '0',
    '--retry-base-ms',
    '50',
    '--attempt-timeout-ms',
    '5000',
  ]);
  apiA = createSenderApi(baseUrl, TOKEN_A);
  apiB = createSenderApi(baseUrl, TOKEN_B);
});

afterAll(async () => {
  serveChild?.kill('SIGTERM');
  server?.closeAllConnections();
  await new Promise<void>((r) => (server === undefined ? r() : server.close(() => r())));
  for (const h of hooks.values()) await h.receiver.close();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

/** A submission as JSON text, `params` (JSON text) as `user_webhook_parameters` when given. */
function submission(url: string, params?: string, output = '{"paid": true, "amount": 1000000}'): string {
  return (
    `{"model":"${MODEL}","input":{"file":"x","simulate":{"output":${output}}},"webhook_receiver":${JSON.stringify(url)}` +
    `${params === undefined ? '' : `,"user_webhook_parameters":${params}`}}`
  );
}

/** Waits for the job's delivery to end; a refusal is one attempt (4xx: the service does not retry). */
async function settled(api: SenderApi, jobId: string): Promise<DeliveriesView> {
  return api.waitForFinalDelivery(jobId, WAIT_MS);
}

/** What the submitter's delivery log shows of every tag refusal: one code, no cause. */
const REFUSED_BODY = { error: { code: 'ERR_RECIPIENT_REFUSED', message: 'this job is not for this receiver' } };

/** Refused once with 403; the delivery log shows the generic answer, A's outcome the specific code. */
async function expectRefused(target: Hook, jobId: string, code: string, api = apiB): Promise<void> {
  const d = await settled(api, jobId);
  expect(d.delivery).toBe('rejected');
  expect(d.attempts.map((a) => [a.status_code, a.response_body])).toEqual([[403, REFUSED_BODY]]);
  expect(target.refused.get(jobId)).toBe(code);
  expect(target.handled.has(jobId)).toBe(false);
}

describe('recipient binding through jobhook serve with two organizations', () => {
  it("B's jobs aimed at A's receiver get 403 (A's outcome ERR_RECIPIENT_TAG_MISSING), and A's handler never runs", async () => {
    const a = hook('/a', { recipientSecret: SECRET_A, recipientUrl: `${origin}/a` });
    const ids = [
      await apiB.submit(submission(a.url, '{"order_id": "A-1001"}')),
      await apiB.submit(submission(a.url)),
      await apiB.submit(submission(a.url, '{"order_id": "A-1002", "note": "no tag"}')),
    ];
    for (const id of ids) await expectRefused(a, id, 'ERR_RECIPIENT_TAG_MISSING');
    expect(a.receiver.stats()).toMatchObject({ handled: 0, rejected: { ERR_RECIPIENT_TAG_MISSING: 3 } });
  });

  it("A's jobs submitted with @jobhook/client and recipientSecret are handled once, without the tag", async () => {
    const a = hooks.get('/a')!;
    const client = createClient({ baseUrl, apiKey: TOKEN_A, recipientSecret: SECRET_A });
    const { job_id: withParams } = await client.submitJob({
      model: MODEL,
      input: { file: 'x', simulate: { output: { pages: 2 } } },
      webhook_receiver: a.url,
      user_webhook_parameters: { order_id: 'A-1001' },
    });
    const { job_id: bare } = await client.submitJob({ model: MODEL, input: { file: 'x' }, webhook_receiver: a.url });
    for (const id of [withParams, bare]) expect((await settled(apiA, id)).delivery).toBe('delivered');
    // A redelivery is answered "duplicate": still handled once.
    await apiA.redeliver(withParams);
    await expect.poll(() => a.receiver.stats().duplicates).toBe(1);
    expect(a.handled.get(withParams)).toHaveLength(1);
    expect(a.handled.get(withParams)![0]!.user_parameters).toEqual({ order_id: 'A-1001' });
    expect(a.handled.get(bare)).toHaveLength(1);
    expect('user_parameters' in a.handled.get(bare)![0]!).toBe(false);
  });

  it('a tag copied from A’s job for another URL onto B’s job is refused: outcome ERR_RECIPIENT_TAG_INVALID (url)', async () => {
    const a = hooks.get('/a')!;
    // A's staging receiver shares the secret (against the advice): its jobs' tags leak through the job view or a log.
    const staging = hook('/a-staging', { recipientSecret: SECRET_A });
    const client = createClient({ baseUrl, apiKey: TOKEN_A, recipientSecret: SECRET_A });
    const { job_id: stagingJob } = await client.submitJob({
      model: MODEL,
      input: { file: 'x' },
      webhook_receiver: staging.url,
      user_webhook_parameters: { env: 'staging' },
    });
    expect((await settled(apiA, stagingJob)).delivery).toBe('delivered');
    const view = JSON.parse(await apiA.pollText(stagingJob)) as { user_parameters: Record<string, string> };
    const copied = view.user_parameters[RECIPIENT_TAG_KEY]!;
    expect(copied).toMatch(/^v1\./);
    const id = await apiB.submit(submission(a.url, JSON.stringify({ [RECIPIENT_TAG_KEY]: copied, order_id: 'A-1001' })));
    await expectRefused(a, id, 'ERR_RECIPIENT_TAG_INVALID');
  });

  it('a tag copied from one of A’s deliveries onto B’s jobs opens the door for none of them: outcome ERR_RECIPIENT_TAG_REUSED', async () => {
    const a = hooks.get('/a')!;
    const client = createClient({ baseUrl, apiKey: TOKEN_A, recipientSecret: SECRET_A });
    const { job_id: own } = await client.submitJob({ model: MODEL, input: { file: 'x' }, webhook_receiver: a.url });
    expect((await settled(apiA, own)).delivery).toBe('delivered');
    // The tag as A's job view shows it (or a log line, a capture): valid, for this URL, hours from expiry.
    const copied = (JSON.parse(await apiA.pollText(own)) as { user_parameters: Record<string, string> }).user_parameters[
      RECIPIENT_TAG_KEY
    ]!;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await apiB.submit(submission(a.url, JSON.stringify({ [RECIPIENT_TAG_KEY]: copied, n: i }))));
    for (const id of ids) await expectRefused(a, id, 'ERR_RECIPIENT_TAG_REUSED');
    // A's own job, redelivered, is still A's.
    await apiA.redeliver(own);
    expect((await settled(apiA, own)).delivery).toBe('delivered');
    expect(a.handled.get(own)).toHaveLength(1);
  });

  it('a tag made with another secret, and an expired tag, are refused, the causes in A’s outcomes only', async () => {
    const a = hooks.get('/a')!;
    const otherSecret = createRecipientTag({ secret: SECRET_B, webhookReceiver: a.url }).value;
    const forged = await apiB.submit(submission(a.url, JSON.stringify({ [RECIPIENT_TAG_KEY]: otherSecret })));
    await expectRefused(a, forged, 'ERR_RECIPIENT_TAG_INVALID');
    // A's own tag, issued 7 hours ago (past the 6-hour default plus 5 minutes of skew).
    const old = createRecipientTag({ secret: SECRET_A, webhookReceiver: a.url, now: Date.now() - 7 * HOUR }).value;
    const expired = await apiA.submit(submission(a.url, JSON.stringify({ [RECIPIENT_TAG_KEY]: old })));
    await expectRefused(a, expired, 'ERR_RECIPIENT_TAG_EXPIRED', apiA);
  });

  it('during a rotation, jobs tagged with the new and the old secret are handled; another secret is refused', async () => {
    const rotating = hook('/rotating', { recipientSecret: [SECRET_A, SECRET_A_OLD] });
    const ids: string[] = [];
    for (const secret of [SECRET_A, SECRET_A_OLD]) {
      const client = createClient({ baseUrl, apiKey: TOKEN_A, recipientSecret: secret });
      ids.push((await client.submitJob({ model: MODEL, input: { file: 'x' }, webhook_receiver: rotating.url })).job_id);
    }
    for (const id of ids) expect((await settled(apiA, id)).delivery).toBe('delivered');
    expect(ids.map((id) => rotating.handled.get(id)?.length)).toEqual([1, 1]);
    const foreign = createClient({ baseUrl, apiKey: TOKEN_B, recipientSecret: SECRET_B });
    const { job_id: refused } = await foreign.submitJob({ model: MODEL, input: { file: 'x' }, webhook_receiver: rotating.url });
    await expectRefused(rotating, refused, 'ERR_RECIPIENT_TAG_INVALID');
  });

  it("rollout mode ('log') handles a job without a tag and logs why it would be refused", async () => {
    const rollout = hook('/rollout', { recipientSecret: SECRET_A, recipientCheck: 'log' });
    const id = await apiA.submit(submission(rollout.url, '{"order_id": "before-the-tag"}', '{"pages": 1}'));
    expect((await settled(apiA, id)).delivery).toBe('delivered');
    expect(rollout.handled.get(id)).toHaveLength(1);
    expect(rollout.warnings).toEqual([
      expect.objectContaining({ level: 40, code: 'ERR_RECIPIENT_TAG_MISSING', cause: 'missing', jobId: id }),
    ]);
  });
});

describe('the Express example with JOBHOOK_RECIPIENT_SECRET', () => {
  let app: ExampleReceiver | undefined;
  afterAll(async () => {
    await app?.stop();
  });

  it("refuses B's job with 403 and handles A's tagged job once", async () => {
    app = await startExampleReceiver({ framework: 'express', publicKeyPath: DEMO_PUBLIC, env: { JOBHOOK_RECIPIENT_SECRET: SECRET_A } });
    const foreign = await apiB.submit(submission(app.webhookUrl, '{"order_id": "A-1001"}'));
    const d = await settled(apiB, foreign);
    expect([d.delivery, d.attempts.map((x) => x.status_code)]).toEqual(['rejected', [403]]);
    const client = createClient({ baseUrl, apiKey: TOKEN_A, recipientSecret: SECRET_A });
    const { job_id: own } = await client.submitJob({ model: MODEL, input: { file: 'x' }, webhook_receiver: app.webhookUrl });
    await app.waitForHandled([own], WAIT_MS);
    expect((await settled(apiA, own)).delivery).toBe('delivered');
    expect(app.handledCount(own)).toBe(1);
    expect(app.handledCount(foreign)).toBe(0);
    expect(d.attempts[0]?.response_body).toEqual(REFUSED_BODY);
    expect(app.output()).toContain('ERR_RECIPIENT_TAG_MISSING');
  });
});
