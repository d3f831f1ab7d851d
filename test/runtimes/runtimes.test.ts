/**
 * `@jobhook/core` under Bun, Deno and workerd (Cloudflare Workers' runtime), the real binaries from
 * npm (test/runtimes, installed on first use: see test/helpers/runtimes-workspace.ts). Each serves
 * the same app (app/webhook-app.mjs: `createFetchHandler` with its memory store, and `constructEvent`
 * by hand) over HTTP, and gets the same deliveries: a body a Python service made and signed with the
 * demo key, that body changed after signing, the body signed by a key the receiver does not hold,
 * and the first delivery again. The answers must be the ones the README promises for every runtime.
 * Under Bun and Deno, two instances on one Redis (`@jobhook/core/redis`) also share the claims.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../../packages/core/test/helpers/redis-server.js';
import { makeSignedDeliveries, type Delivery, type SignedDeliveries } from '../helpers/python-signed-deliveries.js';
import { startRuntimeServer, type RuntimeServer } from '../helpers/runtime-server.js';
import { ensureRuntimesWorkspace, INSTALL_TIMEOUT_MS, RUNTIMES_DIR, type RuntimesWorkspace } from '../helpers/runtimes-workspace.js';

const WORK = join(RUNTIMES_DIR, '.work/runtimes');
/** A hang guard for starting a runtime (workerd's first start compiles the bundle), not a speed check. */
const START_TIMEOUT_MS = 120_000;

/**
 * workerd runs with `nodejs_compat` under three configurations: a compatibility date from 2026-03-01
 * on (Node's timers), an older one with the `enable_nodejs_global_timers` flag (Node's timers too),
 * and an older one without it, where `setTimeout` returns a number with no `unref`: the receiver's
 * lease heartbeat must not need one.
 */
const WORKERD_COMPAT = {
  workerd: { date: '2026-03-01', flags: ['nodejs_compat'] },
  'workerd-2025-10-01': { date: '2025-10-01', flags: ['nodejs_compat', 'enable_nodejs_global_timers'] },
  'workerd-2026-02-01-web-timers': { date: '2026-02-01', flags: ['nodejs_compat'] },
} as const;

type Runtime = 'bun' | 'deno' | keyof typeof WORKERD_COMPAT;

/** How each runtime's `navigator.userAgent` starts: proof the answer came from that runtime. */
const USER_AGENT: Record<Runtime, RegExp> = {
  bun: /^Bun\/1\./,
  deno: /^Deno\/2\./,
  workerd: /^Cloudflare-Workers$/,
  'workerd-2025-10-01': /^Cloudflare-Workers$/,
  'workerd-2026-02-01-web-timers': /^Cloudflare-Workers$/,
};

let workspace: RuntimesWorkspace;
let deliveries: SignedDeliveries;

beforeAll(async () => {
  workspace = await ensureRuntimesWorkspace();
  deliveries = await makeSignedDeliveries();
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
}, INSTALL_TIMEOUT_MS);

const portFromJsonLine = (key: string, value?: string) => (line: string) => {
  try {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if (value !== undefined && parsed[key] !== value) return undefined;
    const port = value === undefined ? parsed[key] : parsed['port'];
    return typeof port === 'number' ? port : undefined;
  } catch {
    return undefined;
  }
};

/** Bundles app/worker.mjs with esbuild and writes the workerd config that serves it. */
async function prepareWorker(name: keyof typeof WORKERD_COMPAT): Promise<string> {
  const { date, flags } = WORKERD_COMPAT[name];
  const dir = join(WORK, name);
  mkdirSync(dir, { recursive: true });
  await promisify(execFile)(
    workspace.bin('esbuild'),
    [
      'app/worker.mjs',
      '--bundle',
      '--format=esm',
      '--platform=neutral',
      '--main-fields=module,main',
      '--conditions=workerd,worker',
      // nodejs_compat provides node:crypto, node:buffer …: the bundle imports them from the runtime.
      '--external:node:*',
      `--outfile=${join(dir, 'worker.js')}`,
    ],
    { cwd: RUNTIMES_DIR },
  );
  writeFileSync(join(dir, 'public.pem'), deliveries.publicKeyPem);
  const config = join(dir, 'config.capnp');
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "${date}",
  compatibilityFlags = ${JSON.stringify(flags)},
  bindings = [ (name = "JOBHOOK_PUBLIC_KEY", text = embed "public.pem") ],
);
`,
  );
  return config;
}

/** Starts the app under `runtime`; with `redisUrl` (Bun and Deno), on the Redis store. */
async function start(runtime: Runtime, redisUrl?: string): Promise<RuntimeServer> {
  const env = { JOBHOOK_PUBLIC_KEY: deliveries.publicKeyPem, ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }) };
  switch (runtime) {
    case 'bun':
      return startRuntimeServer({
        command: workspace.bin('bun'),
        args: ['app/serve-bun.mjs'],
        cwd: RUNTIMES_DIR,
        env,
        port: portFromJsonLine('listening'),
      });
    case 'deno':
      return startRuntimeServer({
        command: workspace.bin('deno'),
        args: [
          'run',
          '--no-lock',
          '--no-prompt',
          '--allow-net=127.0.0.1',
          // ioredis reads the whole environment; without Redis, the app's two are all.
          redisUrl === undefined ? '--allow-env=JOBHOOK_PUBLIC_KEY,REDIS_URL' : '--allow-env',
          '--allow-sys=hostname',
          'app/serve-deno.mjs',
        ],
        cwd: RUNTIMES_DIR,
        env: { ...env, DENO_DIR: join(WORK, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1' },
        port: portFromJsonLine('listening'),
      });
    case 'workerd':
    case 'workerd-2025-10-01':
    case 'workerd-2026-02-01-web-timers': {
      const config = await prepareWorker(runtime);
      return startRuntimeServer({
        command: workspace.bin('workerd'),
        args: ['serve', config, '--control-fd=3'],
        cwd: RUNTIMES_DIR,
        port: portFromJsonLine('event', 'listen'),
        announcedOn: 'fd3',
      });
    }
  }
}

async function post(url: string, delivery: Delivery): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  return { status: response.status, body: await response.json() };
}

describe.each<Runtime>(['bun', 'deno', 'workerd', 'workerd-2025-10-01', 'workerd-2026-02-01-web-timers'])('%s', (runtime) => {
  let server: RuntimeServer;

  beforeAll(async () => {
    server = await start(runtime);
  }, START_TIMEOUT_MS);
  afterAll(() => server?.stop());
  // What the runtime logged (the receiver's JSON lines, the runtime's errors) explains a failure.
  afterEach(({ task }) => {
    if (task.result?.state === 'fail') console.error(`${runtime} stderr:\n${server?.stderr()}`);
  });

  it('answers from the runtime itself', async () => {
    const response = await fetch(`${server.url}/handled`);
    expect(((await response.json()) as { userAgent: string }).userAgent).toMatch(USER_AGENT[runtime]);
  });

  it('constructEvent returns the Python-signed event and refuses the tampered and unknown-key deliveries', async () => {
    const url = `${server.url}/construct-event`;
    expect(await post(url, deliveries.valid)).toEqual({ status: 200, body: { ok: true, event: deliveries.expectedEvent } });
    expect(await post(url, deliveries.tampered)).toEqual({ status: 200, body: { ok: false, status: 401, code: 'ERR_SIGNATURE_INVALID' } });
    expect(await post(url, deliveries.unknownKey)).toEqual({
      status: 200,
      body: { ok: false, status: 401, code: 'ERR_SIGNATURE_INVALID' },
    });
    // constructEvent keeps no state: a redelivery verifies again (deduplication is the receiver's).
    expect(await post(url, deliveries.duplicate)).toEqual({ status: 200, body: { ok: true, event: deliveries.expectedEvent } });
  });

  it('createFetchHandler handles the delivery once, refuses the forgeries and answers the redelivery as a duplicate', async () => {
    const url = `${server.url}/webhooks/jobs`;
    const { jobId } = deliveries;
    expect(await post(url, deliveries.valid)).toEqual({ status: 200, body: { ok: true, job_id: jobId, duplicate: false } });
    expect(await post(url, deliveries.tampered)).toMatchObject({ status: 401, body: { error: { code: 'ERR_SIGNATURE_INVALID' } } });
    expect(await post(url, deliveries.unknownKey)).toMatchObject({ status: 401, body: { error: { code: 'ERR_SIGNATURE_INVALID' } } });
    expect(await post(url, deliveries.duplicate)).toEqual({ status: 200, body: { ok: true, job_id: jobId, duplicate: true } });
    const response = await fetch(`${server.url}/handled`);
    expect(((await response.json()) as { handled: string[] }).handled).toEqual([jobId]);
  });
});

/**
 * The Redis store (`@jobhook/core/redis`, ioredis over TCP) under Bun and Deno: two instances of the
 * app share one Redis, so a redelivery to the other instance is a duplicate there too. Workers has no
 * TCP client ioredis can use, so it is not run there.
 */
describe.each<Runtime>(['bun', 'deno'])('%s with the Redis store', (runtime) => {
  let redis: RedisServer;
  const servers: RuntimeServer[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    for (const server of servers) server.stop();
    await redis?.dispose();
  });
  afterEach(({ task }) => {
    if (task.result?.state === 'fail') for (const server of servers) console.error(`${runtime} stderr:\n${server.stderr()}`);
  });

  it(
    'two instances on one Redis: handled on one, the redelivery to the other is a duplicate',
    async () => {
      servers.push(await start(runtime, redis.url), await start(runtime, redis.url));
      const [first, second] = servers as [RuntimeServer, RuntimeServer];
      const { jobId } = deliveries;
      expect(await post(`${first.url}/webhooks/jobs`, deliveries.valid)).toEqual({
        status: 200,
        body: { ok: true, job_id: jobId, duplicate: false },
      });
      expect(await post(`${second.url}/webhooks/jobs`, deliveries.duplicate)).toEqual({
        status: 200,
        body: { ok: true, job_id: jobId, duplicate: true },
      });
      const handled = await Promise.all(
        servers.map(async (server) => ((await (await fetch(`${server.url}/handled`)).json()) as { handled: string[] }).handled),
      );
      expect(handled).toEqual([[jobId], []]);
    },
    START_TIMEOUT_MS,
  );
});
