/**
 * `jobhook serve` (the BUILT binary, spawned): a job submitted with plain fetch is delivered, signed,
 * to a real core receiver, verified with the public key file the command printed; SIGTERM / SIGINT
 * stop it with exit 0.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID, createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReceiver, type AsyncJobCompletedEvent, type Receiver } from '@jobhook/core';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from '../../core/test/helpers/redis-server.js';
import { main } from '../src/index.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, '../dist/bin.js');
const REPO = resolve(HERE, '../../..');
const DEMO_PRIVATE = join(REPO, 'examples/keys/demo.private.pem');
const DEMO_PUBLIC = join(REPO, 'examples/keys/demo.public.pem');

interface Serving {
  child: ChildProcessWithoutNullStreams;
  banner: string;
  out: () => string;
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcessWithoutNullStreams>();
let tmp: string;

/**
 * Spawns `jobhook serve --ephemeral` (these runs keep no state: the tests start `serve` in parallel,
 * in the repository), resolving once its banner is complete (or rejecting when it exits first).
 */
function serve(args: readonly string[]): Promise<Serving> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--ephemeral', ...args], { cwd: REPO });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      r({ code, signal });
    }),
  );
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 10 s: ${out} ${err}`)), 10_000);
    const onData = (): void => {
      if (out.includes('Stop with')) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        resolvePromise({ child, banner: out, out: () => out, err: () => err, exited });
      }
    };
    child.stdout.on('data', onData);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code} before its banner: ${err}`));
    });
  });
}

/** Runs `jobhook serve` expecting it to fail at once. */
async function serveFails(args: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--ephemeral', ...args], { cwd: REPO });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  children.delete(child);
  return { code, out, err };
}

/** Runs `jobhook …` in this process with plain streams. */
async function inProcess(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  io.stdin.end();
  const code = await main(args, io);
  io.stdout.end();
  io.stderr.end();
  return { code, out: String(io.stdout.read() ?? ''), err: String(io.stderr.read() ?? '') };
}

function field(banner: string, name: string): string {
  const match = new RegExp(`${name}:\\s+(\\S+)`).exec(banner);
  if (match === null) throw new Error(`no '${name}' in the banner:\n${banner}`);
  return match[1]!;
}

/** Sends `signal` and resolves with the exit code once the process has exited (a hang fails at the test timeout). */
async function stop(serving: Serving, signal: NodeJS.Signals): Promise<{ code: number | null }> {
  serving.child.kill(signal);
  const { code } = await serving.exited;
  return { code };
}

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b)`);
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-serve-test-'));
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

describe('jobhook serve', () => {
  let server: Server | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server === undefined ? r() : server.close(() => r())));
    await receiver?.close();
    server = undefined;
    receiver = undefined;
  });

  it('serves jobs, delivers the signed webhook to a local receiver, and stops on SIGTERM with exit 0', async () => {
    const serving = await serve([
      '--allow-insecure-receivers',
      '--allow-receiver',
      '127.0.0.0/8',
      '--retry-base-ms',
      '50',
      '--attempt-timeout-ms',
      '1000',
    ]);
    const baseUrl = /listening on (http:\/\/\S+)/.exec(serving.banner)![1]!;
    const apiKey = field(serving.banner, 'inference key');
    expect(field(serving.banner, 'management key')).toMatch(/^jh_mgmt_/);
    expect(field(serving.banner, 'queue')).toBe('memory');
    const publicKeyFile = field(serving.banner, 'public key');

    const events: AsyncJobCompletedEvent[] = [];
    let delivered!: () => void;
    const webhook = new Promise<void>((r) => (delivered = r));
    receiver = createReceiver({
      publicKeys: readFileSync(publicKeyFile),
      onEvent: (event) => {
        events.push(event);
        delivered();
      },
    });
    const r = receiver;
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void r.handle({ method: req.method ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) }).then((a) => {
          res.writeHead(a.status, a.headers).end(a.body);
        });
      });
    });
    await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', ok));
    const hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const submitted = await fetch(`${baseUrl}/v3/universal-ai/async`, {
      method: 'POST',
      headers,
      body:
        '{"model": "ocr/ocr_async/amazon", "input": {"file": "x", "simulate": {"delay_ms": 20, "output": {"ratio": 1.0}}},' +
        ` "webhook_receiver": "${hookUrl}", "user_webhook_parameters": {"order": 42}}`,
    });
    expect(submitted.status).toBe(201);
    const { job_id: jobId } = (await submitted.json()) as { job_id: string };

    await webhook;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ job_id: jobId, status: 'success', output: { ratio: 1 }, user_parameters: { order: 42 } });
    expect(receiver.stats()).toMatchObject({ verified: 1, rejected: {} });

    const polled = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers });
    expect(polled.status).toBe(200);
    expect(await polled.json()).toMatchObject({ job_id: jobId, status: 'success' });
    // The attempt is counted once the sender has read the answer, a moment after the handler ran.
    const metricsUrl = field(serving.banner, 'metrics');
    expect(metricsUrl).toBe(`${baseUrl}/metrics`);
    await expect.poll(async () => (await fetch(metricsUrl)).text()).toContain('jobhook_sender_deliveries_total{result="delivered"} 1');

    const { code } = await stop(serving, 'SIGTERM');
    expect(code).toBe(0);
    expect(serving.out()).toContain('SIGTERM: stopping');
    expect(existsSync(publicKeyFile)).toBe(false); // the temp key file is removed on exit
    expect(serving.err()).toBe('');
  });

  it('signs with --private-key, writes --public-key-out, takes --config keys, and stops on SIGINT', async () => {
    const token = `jh_inf_${'c'.repeat(32)}`;
    const config = join(tmp, 'accounts.json');
    writeFileSync(
      config,
      JSON.stringify({
        organizations: [
          {
            id: 'acme',
            members: ['ada@acme.test'],
            keys: [{ id: randomUUID(), token, kind: 'inference', name: 'ci', member: 'ada@acme.test', balance: null, revoked: false }],
          },
        ],
      }),
    );
    const publicOut = join(tmp, 'service.pem');
    const serving = await serve([
      '--config',
      config,
      '--private-key',
      DEMO_PRIVATE,
      '--public-key-out',
      publicOut,
      '--body-style',
      'compact',
    ]);
    expect(serving.banner).not.toContain('inference key');
    expect(field(serving.banner, 'public key')).toBe(publicOut);
    const spki = (pem: string | Buffer): string => createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
    expect(readFileSync(publicOut, 'utf8')).toBe(spki(readFileSync(DEMO_PUBLIC)));

    const baseUrl = /listening on (http:\/\/\S+)/.exec(serving.banner)![1]!;
    const answer = await fetch(`${baseUrl}/v3/universal-ai/async/${randomUUID()}`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(404); // authenticated with the config's key; no such job
    const refused = await fetch(`${baseUrl}/v3/universal-ai/async/${randomUUID()}`, {
      headers: { authorization: 'Bearer nope-nope-nope-nope' },
    });
    expect(refused.status).toBe(401);

    const { code } = await stop(serving, 'SIGINT');
    expect(code).toBe(0);
    expect(existsSync(publicOut)).toBe(true); // a file the user named stays
  });

  it('keeps jobs in Redis with --redis, and still exits 0 on SIGTERM', async () => {
    const redis = await startRedisServer({ own: true });
    try {
      const serving = await serve(['--redis', redis.url, '--private-key', DEMO_PRIVATE, '--job-delay-ms', '0']);
      expect(field(serving.banner, 'queue')).toBe('redis');
      const baseUrl = /listening on (http:\/\/\S+)/.exec(serving.banner)![1]!;
      const headers = { authorization: `Bearer ${field(serving.banner, 'inference key')}`, 'content-type': 'application/json' };
      const submitted = await fetch(`${baseUrl}/v3/universal-ai/async`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'ocr/ocr_async/amazon', input: { file: 'x' } }),
      });
      const { job_id: jobId } = (await submitted.json()) as { job_id: string };
      // Polled as a client would, until the job leaves 'processing' (no count of tries: how long the
      // job takes on a busy machine is not the point; a job stuck in 'processing' fails at the test timeout).
      let status = 'processing';
      while (status === 'processing') {
        await new Promise((r) => setTimeout(r, 20));
        status = ((await (await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers })).json()) as { status: string }).status;
      }
      expect(status).toBe('success');
      const { code } = await stop(serving, 'SIGTERM');
      expect(code).toBe(0);
    } finally {
      await redis.dispose();
    }
  });

  it('passes --keep-alive-timeout-ms, --connection-timeout-ms and --max-stored-job-bytes to the sender; unset, its defaults apply', async () => {
    const tuned = await serve(['--keep-alive-timeout-ms', '2000', '--connection-timeout-ms', '5000', '--max-stored-job-bytes', '2097152']);
    const plain = await serve([]);
    try {
      // Node announces the server's keep-alive timeout (in seconds) on every kept-alive answer.
      const keepAlive = async (s: Serving) =>
        (await fetch(`${/listening on (http:\/\/\S+)/.exec(s.banner)![1]!}/metrics`)).headers.get('keep-alive');
      expect(await keepAlive(tuned)).toBe('timeout=2');
      expect(await keepAlive(plain)).toBe('timeout=5');
    } finally {
      expect((await stop(tuned, 'SIGTERM')).code).toBe(0);
      expect((await stop(plain, 'SIGTERM')).code).toBe(0);
    }
  });

  it('exits 2 naming the flag on a bad value', async () => {
    // The binary once, then the rest in-process through main(): the same code path, without a
    // process start per case.
    const spawned = await serveFails(['--body-style', 'yaml']);
    expect(spawned.code).toBe(2);
    expect(spawned.out).toBe('');
    expect(spawned.err).toContain("--body-style must be one of python, canonical, compact, got 'yaml'");
    expect(spawned.err).toContain('Usage: jobhook serve');

    const taken = createNetServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const takenPort = String((taken.address() as AddressInfo).port);
    const cases: [string[], string][] = [
      [['--port', '70000'], '--port'],
      [['--retry-base-ms', 'soon'], '--retry-base-ms'],
      [['--attempt-timeout-ms', '0'], '--attempt-timeout-ms'],
      [['--max-retries', '-1'], '--max-retries'],
      [['--job-delay-ms', '1.5'], '--job-delay-ms'],
      [['--max-canonical-bytes', '100'], '--max-canonical-bytes'],
      [['--redeliver-cooldown-ms', '-5'], '--redeliver-cooldown-ms'],
      [['--max-redeliveries', 'many'], '--max-redeliveries'],
      [['--retry-base-ms', '500', '--max-retry-delay-ms', '100'], '--max-retry-delay-ms'],
      [['--max-stored-job-bytes', '1000'], '--max-stored-job-bytes must be an integer >= 1048576, got 1000'],
      [['--max-stored-job-bytes', 'lots'], "--max-stored-job-bytes must be a whole number, got 'lots'"],
      [['--keep-alive-timeout-ms', '0'], '--keep-alive-timeout-ms must be an integer from 1'],
      [['--connection-timeout-ms', '50'], '--connection-timeout-ms must be an integer from 100'],
      [['--request-timeout-ms', '1000', '--headers-timeout-ms', '2000'], '--headers-timeout-ms must be an integer from 100 to 1000'],
      [['--allow-receiver', '300.0.0.0/8'], '--allow-receiver'],
      [['--allow-receiver', '10.0.0.0/33'], '--allow-receiver'],
      [['--redis', 'http://localhost:6379'], '--redis'],
      [['--api-key', 'short'], '--api-key'],
      [['--frobnicate'], '--frobnicate'],
      [['--state-dir', ' '], '--state-dir must not be empty'],
      [['--state-dir', 'elsewhere'], '--ephemeral keeps no state: leave out --state-dir'],
      [['--port', takenPort, '--private-key', DEMO_PRIVATE], 'EADDRINUSE'],
    ];
    try {
      for (const [args, flag] of cases) {
        const res = await inProcess(['serve', '--ephemeral', ...args]);
        expect(res.code, args.join(' ')).toBe(2);
        expect(res.out).toBe('');
        expect(res.err).toContain(flag);
        expect(res.err).toContain('Usage: jobhook serve');
      }
    } finally {
      await new Promise<void>((r) => taken.close(() => r()));
    }
  });

  it('refuses a --redis URL that is not redis:// without echoing its password', async () => {
    const res = await inProcess(['serve', '--ephemeral', '--redis', 'http://admin:hunter2-secret@localhost:6379/0']);
    expect(res.code).toBe(2);
    expect(res.err).toContain('--redis must be a redis:// or rediss:// URL');
    expect(res.err).toContain('http://admin:***@localhost:6379/0');
    expect(res.err).not.toContain('hunter2-secret');
  });
});
