// The one-liner of examples/job-app/README.md, run as written (bash, `npx jobhook serve` in the
// background, the app in the foreground) with only its ports, files and database moved to this
// test's own, then the README's curl lines sent as fetch requests with their headers and body:
// the job is submitted with the app's token and its result shows. Needs `npx tsc -b`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../packages/core/test/helpers/redis-server.js';
import { startPostgresServer, type PostgresServer } from '../../packages/postgres/test/helpers/postgres-server.js';
import { assertBuilt, REPO_ROOT } from '../helpers/chaos-cluster.js';
import { waitUntil } from '../helpers/e2e-wait.js';

const README = join(REPO_ROOT, 'examples/job-app/README.md');

let tmp: string;
let postgres: PostgresServer;
let group: number | undefined;

/** True while a process of `pgid` exists. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
const killGroup = (): void => {
  if (group !== undefined && groupAlive(group)) process.kill(-group, 'SIGKILL');
};

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-job-app-readme-'));
  postgres = await startPostgresServer({ own: true });
  // The background `jobhook serve` is not our child: its group goes down with us whatever happens.
  process.once('exit', killGroup);
}, 60_000);

afterAll(async () => {
  killGroup();
  await postgres?.dispose();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

/** The ```sh blocks of the README's "Run it" section, in order. */
function runBlocks(): string[] {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('## Run it against the reference service'));
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.trim());
}

/** `text` with each [from, to] replaced everywhere; a `from` the text lacks fails (the README moved on). */
function substitute(text: string, pairs: readonly (readonly [string, string])[]): string {
  let out = text;
  for (const [from, to] of pairs) {
    expect(out, `the README's command holds ${from}`).toContain(from);
    out = out.split(from).join(to);
  }
  return out;
}

/** One curl line as a fetch: its URL, `-H` headers and `-d` body, `$(cat FILE)` read from the file. */
function curlRequest(line: string, files: Record<string, string>): { url: string; init: RequestInit } {
  const expand = (value: string): string =>
    value.replace(/\$\(cat ([^)]+)\)/g, (_m, file: string) => readFileSync(files[file] ?? file, 'utf8').trim());
  const url = /curl -s (\S+)/.exec(line)![1]!;
  const headers: Record<string, string> = {};
  for (const [, , value] of line.matchAll(/-H (["'])(.*?)\1/g)) {
    const [name, ...rest] = expand(value!).split(':');
    headers[name!.trim().toLowerCase()] = rest.join(':').trim();
  }
  const body = /-d '(.*?)'/.exec(line)?.[1];
  return { url: `http://${url}`, init: { method: body === undefined ? 'GET' : 'POST', headers, ...(body === undefined ? {} : { body }) } };
}

test('the README one-liner starts the service and the app (token and all), and its curl lines submit and read a job', async () => {
  const [oneLiner, curls] = runBlocks();
  expect(oneLiner).toBeDefined();
  expect(curls).toBeDefined();
  const [servicePort, appPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const database = 'job_app_readme';
  const admin = postgres.pool();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const files = { '/tmp/jobhook-demo.pub.pem': join(tmp, 'service.pub.pem'), '/tmp/job-app.token': join(tmp, 'job-app.token') };
  const command = substitute(oneLiner!, [
    ['/tmp/jobhook-demo.pub.pem', files['/tmp/jobhook-demo.pub.pem']],
    ['/tmp/job-app.token', files['/tmp/job-app.token']],
    // A state folder of the test's own: the service would otherwise keep its key in the repository's .jobhook/.
    ['--port 8080', `--port ${servicePort} --state-dir ${join(tmp, 'state')}`],
    ['http://127.0.0.1:8080', `http://127.0.0.1:${servicePort}`],
    ['postgres://postgres@127.0.0.1:5432/postgres', postgres.url.replace(/\/[^/]*$/, `/${database}`)],
    // The metrics listener's default port (9464) may be another's on a shared machine.
    ['PORT=3000', `PORT=${appPort} METRICS_PORT=${metricsPort}`],
  ]);

  const child: ChildProcessWithoutNullStreams = spawn('bash', ['-c', command], {
    cwd: REPO_ROOT,
    detached: true,
    env: { ...process.env, DATABASE_URL: undefined, JOB_APP_TOKEN: undefined, JOBHOOK_STORE: undefined },
  });
  group = child.pid;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    await waitUntil(
      () => {
        if (output.includes('"msg":"listening"')) return true;
        if (exited) throw new Error(`the one-liner ended before the app listened:\n${output}`);
        return undefined;
      },
      { timeoutMs: 60_000, what: () => `the app's listening line; output so far:\n${output}` },
    );

    const lines = substitute(curls!, [['localhost:3000', `127.0.0.1:${appPort}`]]).split('\n');
    const submit = curlRequest(lines.find((l) => l.includes('-d '))!, files);
    const submitted = await fetch(submit.url, submit.init);
    const answer = await submitted.text();
    expect(submitted.status, answer).toBe(202);
    const jobId = (JSON.parse(answer) as { job_id: string }).job_id;
    const read = curlRequest(lines.find((l) => l.includes('/jobs/<job_id>'))!.replace('<job_id>', jobId), files);
    const rows = await waitUntil(
      async () => {
        const res = await fetch(read.url, read.init);
        const body = (await res.json()) as { results?: { source: string }[] };
        return res.status === 200 && (body.results?.length ?? 0) > 0 ? body.results : undefined;
      },
      { timeoutMs: 30_000, what: () => `a result of job ${jobId}` },
    );
    expect(rows).toEqual([expect.objectContaining({ status: 'success', source: 'webhook' })]);
    const metrics = curlRequest(
      substitute(lines.find((l) => l.includes('/metrics'))!, [['localhost:9464', `127.0.0.1:${metricsPort}`]]),
      files,
    );
    expect(await (await fetch(metrics.url, metrics.init)).text()).toContain('jobhook_jobs_outstanding');
  } finally {
    // Ctrl-C in the terminal: the whole group gets SIGINT.
    if (groupAlive(group!)) process.kill(-group!, 'SIGINT');
    await waitUntil(() => (groupAlive(group!) ? undefined : true), { timeoutMs: 20_000, what: () => 'the one-liner to stop on SIGINT' });
  }
});
