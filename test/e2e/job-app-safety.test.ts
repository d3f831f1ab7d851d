// examples/job-app is copied into real apps, so its doors are tested as an attacker would knock:
// the app (a child process, `node server.mjs`, built packages) in front of the reference service
// (@jobhook/sender, in this process) and a PostgreSQL of its own. What reached the service is read
// back from the service itself (`GET /v3/universal-ai/async`, the organization's jobs).
// Needs `npx tsc -b` (the app runs the builds).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSender, type Sender } from '@jobhook/sender';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from '../../packages/core/test/helpers/redis-server.js';
import { startPostgresServer, type PostgresServer } from '../../packages/postgres/test/helpers/postgres-server.js';
import { assertBuilt } from '../helpers/chaos-cluster.js';
import { stopAllChildren } from '../helpers/chaos-processes.js';
import { waitUntil } from '../helpers/e2e-wait.js';
import { jobAppHeaders, startJobApp, type JobApp, type JobAppOptions } from '../helpers/job-app-process.js';

const TOKEN = 'job-app-e2e-token-0123456789abcdef';
const MODEL = 'ocr/ocr_async/amazon';
/** A job the service keeps processing for the whole file: its ledger entry stays outstanding. */
const SLOW_INPUT = { file: 'slow', simulate: { delay_ms: 600_000 } };

let tmp: string;
let postgres: PostgresServer;
let sender: Sender;
let serviceUrl: string;
let apiKey: string;
let publicKeyFile: string;
let databases = 0;

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-job-app-safety-'));
  postgres = await startPostgresServer({ own: true });
  sender = await createSender({ allowInsecureReceivers: true, receiverAllowlist: ['127.0.0.0/8'], jobDelayMs: 10 });
  serviceUrl = await sender.listen({ port: 0 });
  apiKey = sender.devKeys!.inference;
  publicKeyFile = join(tmp, 'service.public.pem');
  writeFileSync(publicKeyFile, sender.publicKeyPem);
}, 60_000);

afterAll(async () => {
  await stopAllChildren();
  await sender?.close();
  await postgres?.dispose();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
}, 60_000);

/** The app on a free port, with a database of its own; `log` collects its JSON lines. */
async function startApp(overrides: Partial<JobAppOptions> = {}): Promise<{ app: JobApp; log: Record<string, unknown>[] }> {
  const database = `job_app_${++databases}`;
  const admin = postgres.pool();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const port = await freePort();
  const log: Record<string, unknown>[] = [];
  const app = await startJobApp({
    name: `job-app-${databases}`,
    port,
    token: TOKEN,
    databaseUrl: postgres.url.replace(/\/[^/]*$/, `/${database}`),
    serviceUrl,
    apiKey,
    publicKeyFile,
    publicUrl: `http://127.0.0.1:${port}`,
    deadlineMs: 600_000,
    onLog: (entry) => log.push(entry),
    ...overrides,
  });
  return { app, log };
}

/** One job as the service lists it. */
interface ServiceJob {
  job_id: string;
  status: string;
  user_parameters?: unknown;
  webhook?: { receiver: string };
}

/** Every job the service holds for the app's organization (its API key), newest first. */
async function serviceJobs(): Promise<ServiceJob[]> {
  const jobs: ServiceJob[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '?limit=100' : `?limit=100&cursor=${encodeURIComponent(cursor)}`;
    const res = await fetch(`${serviceUrl}/v3/universal-ai/async${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { jobs: ServiceJob[]; next_cursor: string | null };
    jobs.push(...page.jobs);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return jobs;
}

/** An answer of the app: its status, text, and the text parsed (`{}` when it is not JSON). */
interface AppAnswer {
  status: number;
  text: string;
  json: { error?: { code?: string; message?: string }; job_id?: string; results?: unknown[] };
}

async function call(
  app: JobApp,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<AppAnswer> {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await res.text();
  let json = {};
  try {
    json = JSON.parse(text) as object;
  } catch {
    // not JSON: the assertions on `json` fail with the text in view
  }
  return { status: res.status, text, json };
}

const submit = (app: JobApp, body: unknown, headers: Record<string, string> = jobAppHeaders(TOKEN)) =>
  call(app, 'POST', '/jobs', { headers, body });

describe('examples/job-app: refuses to start unsafe', () => {
  test('without JOB_APP_TOKEN, or with a short one: a line naming it, no listener', async () => {
    await expect(startApp({ token: undefined })).rejects.toThrow(/job-app: set JOB_APP_TOKEN/);
    await expect(startApp({ token: 'short' })).rejects.toThrow(/JOB_APP_TOKEN must be at least 16 characters/);
  });

  test('with the key file missing: a line naming the file and what writes it, not a bare ENOENT', async () => {
    const missing = join(tmp, 'not-written-yet.pem');
    const failure = await startApp({ publicKeyFile: missing }).then(
      () => new Error('the app started'),
      (err: unknown) => err as Error,
    );
    expect(failure.message).toContain(`JOBHOOK_PUBLIC_KEY names ${missing}, which does not exist`);
    expect(failure.message).toContain('--public-key-out');
    expect(failure.message).not.toMatch(/ENOENT|at readFileSync/);
  });
});

describe('examples/job-app: its doors', () => {
  let app: JobApp;
  let log: Record<string, unknown>[];

  beforeAll(async () => {
    ({ app, log } = await startApp());
  });

  test('POST /jobs and GET /jobs/:id without the token, or with a wrong one: 401, and nothing reaches the service', async () => {
    const before = (await serviceJobs()).length;
    const job = { model: MODEL, input: { file: 'anonymous' } };
    const wrong = [
      {},
      { 'content-type': 'application/json' },
      jobAppHeaders(`${TOKEN.slice(0, -1)}x`),
      jobAppHeaders(TOKEN.slice(0, -1)),
      jobAppHeaders(`${TOKEN}x`),
      { 'content-type': 'application/json', authorization: `Basic ${TOKEN}` },
      { 'content-type': 'application/json', authorization: TOKEN },
    ];
    for (const headers of wrong) {
      const posted = await submit(app, job, headers);
      expect(posted.status, posted.text).toBe(401);
      expect(posted.json.error?.code).toBe('ERR_UNAUTHORIZED');
      const read = await call(app, 'GET', '/jobs/00000000-0000-4000-8000-000000000000', { headers });
      expect(read.status, read.text).toBe(401);
      expect(read.json.error?.code).toBe('ERR_UNAUTHORIZED');
      // Fastify answers HEAD for every GET route: the same door.
      expect((await call(app, 'HEAD', '/jobs/00000000-0000-4000-8000-000000000000', { headers })).status).toBe(401);
    }
    expect((await serviceJobs()).length).toBe(before);
  });

  test('with the token: the job is submitted, its result handled, and GET /jobs/:id shows it', async () => {
    const posted = await submit(app, { model: MODEL, input: { file: 'with-token', simulate: { delay_ms: 10 } } });
    expect(posted.status, posted.text).toBe(202);
    const jobId = posted.json.job_id!;
    const read = await waitUntil(
      async () => {
        const r = await call(app, 'GET', `/jobs/${jobId.toUpperCase()}`, { headers: jobAppHeaders(TOKEN) });
        return r.status === 200 && (r.json.results?.length ?? 0) > 0 ? r : undefined;
      },
      { timeoutMs: 30_000, what: () => `a result row of job ${jobId}` },
    );
    expect(read.json.job_id).toBe(jobId.toLowerCase());
    expect(read.json.results).toEqual([expect.objectContaining({ status: 'success', source: 'webhook' })]);
    const bad = await call(app, 'GET', '/jobs/not-a-job-id', { headers: jobAppHeaders(TOKEN) });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.code).toBe('ERR_REQUEST_INVALID');
  });

  test('the caller cannot choose output, user_webhook_parameters or webhook_receiver: refused, and the service never sees them', async () => {
    const before = (await serviceJobs()).length;
    const evil = 'http://127.0.0.1:9/steal';
    const extras = [
      { output: { verdict: 'approved' } },
      { user_webhook_parameters: { recipient_tag: 'mine' } },
      { webhook_receiver: evil },
      { show_original_response: true },
    ];
    const answers: AppAnswer[] = [];
    for (const extra of extras) answers.push(await submit(app, { model: MODEL, input: { file: 'extras' }, ...extra }));
    // What the service holds first: no job with the caller's parameters or receiver, no job at all.
    const afterExtras = await serviceJobs();
    expect(afterExtras.filter((job) => job.user_parameters !== undefined)).toEqual([]);
    expect(afterExtras.filter((job) => job.webhook?.receiver !== `${app.url}/webhooks/jobs`)).toEqual([]);
    expect(afterExtras.length).toBe(before);
    // And the caller is told which field the app does not take.
    extras.forEach((extra, i) => {
      expect(answers[i]!.status, answers[i]!.text).toBe(400);
      expect(answers[i]!.json.error?.code).toBe('ERR_REQUEST_INVALID');
      expect(answers[i]!.json.error?.message).toContain(JSON.stringify(Object.keys(extra)[0]));
    });
    // Fields of the wrong type or size: refused before the service.
    const malformed: unknown[] = [
      [],
      { input: { file: 'x' } },
      { model: 42, input: {} },
      { model: 'not a model', input: {} },
      { model: MODEL, input: [] },
      { model: MODEL, input: 'a string' },
      { model: MODEL, input: { file: 'x'.repeat(17 * 1024) } },
      { model: MODEL, input: { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } } },
    ];
    for (const body of malformed) {
      const posted = await submit(app, body);
      expect(posted.status, `${JSON.stringify(body).slice(0, 80)}: ${posted.text}`).toBe(400);
      expect(posted.json.error?.code).toBe('ERR_REQUEST_INVALID');
    }
    const tooLarge = await submit(app, { model: MODEL, input: { file: 'x'.repeat(40 * 1024) } });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json.error?.code).toBe('ERR_REQUEST_INVALID');
    const jobs = await serviceJobs();
    expect(jobs.length).toBe(before);
    // Every job the service holds came from the app as the app means it: its own webhook, no parameters.
    for (const job of jobs) {
      expect(job.webhook?.receiver).toBe(`${app.url}/webhooks/jobs`);
      expect(job.user_parameters).toBeUndefined();
    }
  });

  test('/metrics is not on the public listener, token or not; its own loopback listener has it', async () => {
    for (const headers of [{}, jobAppHeaders(TOKEN)]) {
      const open = await call(app, 'GET', '/metrics', { headers });
      expect(open.status).toBe(404);
      expect(open.json.error?.code).toBe('ERR_NOT_FOUND');
      expect(open.text).not.toContain('jobhook_');
    }
    const metrics = await fetch(`${app.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('jobhook_jobs_outstanding');
  });

  test("a service error's text is not echoed: a stable code, and the text in the app's log with the request", async () => {
    // The service refuses this input (input.simulate has no member `bogus`) and says so in its answer.
    const posted = await submit(app, { model: MODEL, input: { file: 'refused', simulate: { bogus: 1 } } });
    expect(posted.status, posted.text).toBe(400);
    expect(posted.json.error?.code).toBe('ERR_JOB_REFUSED');
    expect(posted.text).not.toMatch(/bogus|known member|simulate/);
    const line = log.find((entry) => entry['msg'] === 'job submission failed');
    expect(line).toMatchObject({ level: 'error', model: MODEL, status: 400 });
    expect(JSON.stringify(line)).toContain('bogus');
    expect(posted.json.error?.message).toContain(`request ${String(line?.['request_id'])}`);
  });
});

describe('examples/job-app: the service out of reach', () => {
  test('502 ERR_SUBMIT_FAILED, without the network error (an internal address) in the answer', async () => {
    const closedPort = await freePort();
    const { app, log } = await startApp({ serviceUrl: `http://127.0.0.1:${closedPort}` });
    const posted = await submit(app, { model: MODEL, input: { file: 'unreachable' } });
    expect(posted.status, posted.text).toBe(502);
    expect(posted.json.error?.code).toBe('ERR_SUBMIT_FAILED');
    expect(posted.text).not.toContain(String(closedPort));
    expect(posted.text).not.toMatch(/ECONNREFUSED|fetch failed|127\.0\.0\.1/);
    expect(log.find((entry) => entry['msg'] === 'job submission failed')).toMatchObject({ level: 'error', code: 'ERR_NETWORK' });
  });
});

describe('examples/job-app: outstanding jobs', () => {
  test('past JOB_APP_MAX_OUTSTANDING: 429 ERR_TOO_MANY_OUTSTANDING, and no more jobs reach the service', async () => {
    const { app } = await startApp({ maxOutstanding: 3 });
    const before = (await serviceJobs()).length;
    // A burst: the limit holds for requests in flight together (a submission in flight may count
    // twice, so a burst can be refused a little early, never late).
    const burst = await Promise.all(Array.from({ length: 6 }, () => submit(app, { model: MODEL, input: SLOW_INPUT })));
    const accepted = burst.filter((r) => r.status === 202).length;
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(accepted).toBeLessThanOrEqual(3);
    for (const refused of burst.filter((r) => r.status !== 202)) {
      expect(refused.status, refused.text).toBe(429);
      expect(refused.json.error?.code).toBe('ERR_TOO_MANY_OUTSTANDING');
    }
    // One at a time, the count is exact: up to the limit, then 429.
    for (let n = accepted; n < 3; n++) expect((await submit(app, { model: MODEL, input: SLOW_INPUT })).status).toBe(202);
    const past = await submit(app, { model: MODEL, input: SLOW_INPUT });
    expect(past.status, past.text).toBe(429);
    expect(past.json.error?.code).toBe('ERR_TOO_MANY_OUTSTANDING');
    expect((await serviceJobs()).length).toBe(before + 3);
  });
});
