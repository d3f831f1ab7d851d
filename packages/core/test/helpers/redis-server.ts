// Real Redis servers for the store tests: `redis-server` (Debian's binary on PATH) started on free
// ports in temporary directories, nothing persisted, and killed even when a test fails (afterAll
// plus a process exit hook). `REDIS_URL` may point `startRedisServer()` at an existing Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOnExit } from './kill-on-exit.js';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;


/** A port nobody listens on right now (listen on 0, read the port, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a listening socket'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** A Redis reply, as read by {@link redisCommand}. */
export type RedisReply = string | number | null | RedisReply[] | Error;

/**
 * Sends one command over a fresh RESP2 connection and returns the reply (an `-ERR` reply is
 * returned as an Error, not thrown). Rejects when the connection fails or stays silent for `timeoutMs`.
 */
export async function redisCommand(port: number, args: readonly string[], timeoutMs = 2000, host = HOST): Promise<RedisReply> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host, port });
    let buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis ${host}:${port} did not answer ${args[0]} in ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('connect', () => {
      socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
    });
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const parsed = parseReply(buffer, 0);
      if (parsed === undefined) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(parsed.value);
    });
  });
}

/** Parses one RESP2 reply at `at`; undefined when more bytes are needed. */
function parseReply(buf: Buffer, at: number): { value: RedisReply; end: number } | undefined {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[at] ?? 0);
  const line = buf.toString('utf8', at + 1, eol);
  switch (type) {
    case '+':
      return { value: line, end: eol + 2 };
    case '-':
      return { value: new Error(line), end: eol + 2 };
    case ':':
      return { value: Number(line), end: eol + 2 };
    case '$': {
      const len = Number(line);
      if (len < 0) return { value: null, end: eol + 2 };
      if (buf.length < eol + 2 + len + 2) return undefined;
      return { value: buf.toString('utf8', eol + 2, eol + 2 + len), end: eol + 2 + len + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: eol + 2 };
      const items: RedisReply[] = [];
      let end = eol + 2;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, end);
        if (item === undefined) return undefined;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default:
      throw new Error(`unexpected RESP reply type ${JSON.stringify(type)}`);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `port` answers PING with PONG; throws after `timeoutMs` with what went wrong. */
async function waitForPing(port: number, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const exit = exited();
    if (exit !== undefined) throw new Error(exit);
    try {
      const reply = await redisCommand(port, ['PING'], 500);
      if (reply === 'PONG') return;
      last = String(reply);
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(20);
  }
  throw new Error(`redis-server on port ${port} did not answer PING in ${timeoutMs} ms (${last})`);
}

/** One redis-server process we control: start, stop, start again on the same port. */
class RedisProcess {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(
    readonly port: number,
    private readonly args: readonly string[],
  ) {}

  async start(): Promise<void> {
    if (this.child !== undefined) return;
    this.output = '';
    let spawnError: Error | undefined;
    let exitText: string | undefined;
    const child = spawn('redis-server', ['--port', String(this.port), ...this.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('error', (err) => {
      spawnError = err;
    });
    child.once('exit', (code, signal) => {
      exitText = `redis-server on port ${this.port} exited (${signal ?? `code ${code}`})`;
      if (this.child === child) this.child = undefined;
    });
    killOnExit(child);
    this.child = child;
    try {
      await waitForPing(this.port, START_TIMEOUT_MS, () => {
        if (spawnError !== undefined) {
          const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
          return missing
            ? 'redis-server is not on PATH: the store tests need a real Redis (apt-get install redis-server; .ci/run installs it)'
            : `could not start redis-server: ${spawnError.message}`;
        }
        return exitText === undefined ? undefined : `${exitText}:\n${this.output.trim()}`;
      });
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** SIGTERM, then waits for the exit (SIGKILL after a few seconds). */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  get running(): boolean {
    return this.child !== undefined;
  }
}

/** A single Redis for tests. */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  /** True when this is the `REDIS_URL` server, which cannot be stopped or restarted. */
  readonly external: boolean;
  /** Stops the server (SIGTERM, waits for the exit); its port stays reserved for {@link restart}. */
  stop(): Promise<void>;
  /** Starts the server again on the same port (empty: nothing is persisted). */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  dispose(): Promise<void>;
}

const BASE_ARGS = ['--bind', HOST, '--save', '', '--appendonly', 'no'] as const;

/**
 * Starts a `redis-server` on a free port, in a temporary directory, persisting nothing. With
 * `REDIS_URL` set (and `own` not), returns that server instead. Fails with a clear message when
 * redis-server cannot be started, in CI and locally alike.
 */
export async function startRedisServer(options: { own?: boolean } = {}): Promise<RedisServer> {
  const external = process.env.REDIS_URL;
  if (external !== undefined && external !== '' && options.own !== true) {
    const url = new URL(external);
    const port = Number(url.port || 6379);
    const refuse = async (): Promise<void> => {
      throw new Error('REDIS_URL points to a Redis these tests do not control: it cannot be stopped or restarted');
    };
    return { host: url.hostname, port, url: external, external: true, stop: refuse, restart: refuse, dispose: async () => {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-redis-'));
  let lastError: unknown;
  // The free port may be taken between probing and binding: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const server = new RedisProcess(port, [...BASE_ARGS, '--dir', dir]);
    try {
      await server.start();
    } catch (err) {
      lastError = err;
      continue;
    }
    return {
      host: HOST,
      port,
      url: `redis://${HOST}:${port}`,
      external: false,
      stop: () => server.stop(),
      restart: () => server.start(),
      dispose: async () => {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

/** A Redis Cluster of masters on 127.0.0.1, slots spread evenly, no replicas. */
export interface RedisCluster {
  readonly nodes: readonly { host: string; port: number }[];
  /** Stops every node and removes their directory. */
  dispose(): Promise<void>;
}

/**
 * Starts `size` cluster-enabled redis-servers (client and bus ports both free, so no port + 10000
 * arithmetic), joins them with `redis-cli --cluster create`, and waits until every node reports
 * `cluster_state:ok`.
 */
export async function startRedisCluster(size = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-redis-cluster-'));
  const servers: RedisProcess[] = [];
  const dispose = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < size; i++) {
      const port = await freePort();
      const busPort = await freePort();
      const server = new RedisProcess(port, [
        ...BASE_ARGS,
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '2000',
        '--cluster-port',
        String(busPort),
      ]);
      servers.push(server);
      await server.start();
    }
    await createCluster(servers.map((s) => s.port));
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (const server of servers) {
      for (;;) {
        const info = await redisCommand(server.port, ['CLUSTER', 'INFO']);
        if (typeof info === 'string' && info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${size}`)) break;
        if (Date.now() > deadline) throw new Error(`redis cluster node ${server.port} is not ok after ${START_TIMEOUT_MS} ms:\n${String(info)}`);
        await sleep(50);
      }
    }
    return { nodes: servers.map((s) => ({ host: HOST, port: s.port })), dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

async function createCluster(ports: readonly number[]): Promise<void> {
  const args = ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`), '--cluster-replicas', '0', '--cluster-yes'];
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const cli = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    cli.stdout.on('data', (c: Buffer) => (text += c.toString('utf8')));
    cli.stderr.on('data', (c: Buffer) => (text += c.toString('utf8')));
    cli.once('error', (err) => reject(new Error(`could not run redis-cli (needed for the cluster test): ${err.message}`)));
    cli.once('exit', (exitCode) => resolve({ code: exitCode, output: text }));
  });
  if (code !== 0) throw new Error(`redis-cli --cluster create failed (exit ${code}):\n${output.slice(-2000)}`);
}
