// Real Redis servers for the store tests: `redis-server` (Debian's binary on PATH) started in
// temporary directories, nothing persisted, and killed even when a test fails (afterAll plus a
// process exit hook). `REDIS_URL` may point `startRedisServer()` at an existing Redis.
//
// No probe-then-bind race: every server listens on a Unix socket in its own directory
// (`--unixsocket <dir>/redis.sock --unixsocketperm 700`), and it is ready when it answers PING
// there, which only our process can. Redis opens every listener (TCP, cluster bus, socket) before
// it serves anything, so a PONG on our socket also proves that its TCP port (the stores' URL
// options take `redis://` URLs only) and cluster bus port are its own; when another process took
// a port first, redis-server exits with "Address already in use" and the start is retried on new
// ports. Commands go through ioredis (no hand-written RESP parser).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { killOnExit } from './kill-on-exit.js';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
/** Starts retried when a port turned out to be taken (EADDRINUSE). */
const BIND_ATTEMPTS = 5;

/**
 * A port nobody listens on right now (listen on 0, read the port, close). Only for "nothing
 * listens there" (a refused connection): another process may bind it at any time, so never start
 * a server on it without checking that the server that answers is yours (see this file's header).
 */
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

/** A Redis reply, as read by {@link redisCommand}: an error reply is returned as an Error, not thrown. */
export type RedisReply = string | number | null | RedisReply[] | Error;

/** Where {@link redisCommand} connects: a TCP port on 127.0.0.1, or ioredis options (`{ path }` for a Unix socket). */
export type RedisTarget = number | { port: number; host?: string } | { path: string };

/** ioredis options that fail fast: no retries, no offline queue, errors not logged as unhandled. */
function oneShotOptions(target: RedisTarget, timeoutMs: number, host: string): RedisOptions {
  const where =
    typeof target === 'number'
      ? { host, port: target }
      : 'path' in target
        ? { path: target.path }
        : { host: target.host ?? host, port: target.port };
  return {
    ...where,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    retryStrategy: () => null,
  };
}

/**
 * Sends one command over a fresh ioredis connection and returns the reply (an `-ERR` reply is
 * returned as an Error, not thrown). Rejects when the connection fails or stays silent for `timeoutMs`.
 */
export async function redisCommand(target: RedisTarget, args: readonly string[], timeoutMs = 2000, host = HOST): Promise<RedisReply> {
  const [command, ...rest] = args;
  if (command === undefined) throw new Error('redisCommand: no command');
  const client = new Redis(oneShotOptions(target, timeoutMs, host) as never);
  let lastError: Error | undefined;
  client.on('error', (err: Error) => (lastError = err));
  try {
    try {
      await client.connect();
    } catch (err) {
      throw lastError ?? err;
    }
    try {
      return (await client.call(command, ...rest)) as RedisReply;
    } catch (err) {
      if ((err as Error).name === 'ReplyError') return err as Error;
      throw err;
    }
  } finally {
    client.disconnect();
  }
}

/** Waits until the server answers PING with PONG on `socketPath`; throws after `timeoutMs` with what went wrong. */
async function waitForPing(socketPath: string, what: string, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    const exit = exited();
    if (exit !== undefined) throw new Error(exit);
    try {
      const reply = await redisCommand({ path: socketPath }, ['PING'], 500);
      if (reply === 'PONG') return;
      last = String(reply);
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${what} did not answer PING in ${timeoutMs} ms (${last})`);
    // Polling: redis-server says nothing we could wait on until it accepts connections.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A start that failed because a port was taken: worth retrying on other ports. */
class PortTakenError extends Error {}

/** One redis-server process we control: start, stop, start again on the same port and socket. */
class RedisProcess {
  private child: ChildProcess | undefined;
  private output = '';

  /**
   * @param port TCP port, or 0 for none (Unix socket only).
   * @param socketPath the Unix socket, in a directory of ours.
   */
  constructor(
    readonly port: number,
    readonly socketPath: string,
    private readonly args: readonly string[],
  ) {}

  private get name(): string {
    return this.port === 0 ? `redis-server on ${this.socketPath}` : `redis-server on port ${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child !== undefined) return;
    this.output = '';
    let spawnError: Error | undefined;
    let exitText: string | undefined;
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--unixsocket', this.socketPath, '--unixsocketperm', '700', ...this.args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('error', (err) => {
      spawnError = err;
    });
    child.once('exit', (code, signal) => {
      exitText = `${this.name} exited (${signal ?? `code ${code}`})`;
      if (this.child === child) this.child = undefined;
    });
    killOnExit(child);
    this.child = child;
    try {
      await waitForPing(this.socketPath, this.name, START_TIMEOUT_MS, () => {
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
      if (/address already in use/i.test(this.output)) throw new PortTakenError((err as Error).message);
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

/**
 * Starts `make(ports)` with fresh ports until no port was taken (EADDRINUSE): bind and retry,
 * rather than trusting a probed port to stay free.
 */
async function startWithFreshPorts(count: number, make: (ports: number[]) => RedisProcess): Promise<RedisProcess> {
  let lastError: unknown;
  for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const server = make(ports);
    try {
      await server.start();
      return server;
    } catch (err) {
      if (!(err instanceof PortTakenError)) throw err;
      lastError = err;
    }
  }
  throw lastError;
}

/** A single Redis for tests. */
export interface RedisServer {
  readonly host: string;
  /** The TCP port; 0 when started with `tcp: false`. */
  readonly port: number;
  /** `redis://127.0.0.1:PORT`, what the stores' URL options accept. Throws when started with `tcp: false`. */
  readonly url: string;
  /** The Unix socket (`undefined` for the `REDIS_URL` server). */
  readonly socketPath: string | undefined;
  /**
   * A new ioredis client of this server (over the Unix socket when there is one), closed by
   * {@link dispose} if still open. `options` are passed to ioredis.
   */
  client(options?: RedisOptions): Redis;
  /** One command over a fresh connection; see {@link redisCommand}. */
  command(args: readonly string[], timeoutMs?: number): Promise<RedisReply>;
  /** True when this is the `REDIS_URL` server, which cannot be stopped or restarted. */
  readonly external: boolean;
  /** Stops the server (SIGTERM, waits for the exit); its port and socket stay reserved for {@link restart}. */
  stop(): Promise<void>;
  /** Starts the server again on the same port and socket (empty: nothing is persisted). */
  restart(): Promise<void>;
  /** Closes the clients of {@link client}, stops the server and removes its directory. */
  dispose(): Promise<void>;
}

const BASE_ARGS = ['--bind', HOST, '--save', '', '--appendonly', 'no'] as const;

/**
 * Starts a `redis-server` in a temporary directory, persisting nothing, on a Unix socket and (unless
 * `tcp: false`) a TCP port of 127.0.0.1. With `REDIS_URL` set (and `own` not), returns that server
 * instead. Fails with a clear message when redis-server cannot be started, in CI and locally alike.
 */
export async function startRedisServer(options: { own?: boolean; tcp?: boolean } = {}): Promise<RedisServer> {
  const clients = new Set<Redis>();
  const track = (client: Redis): Redis => {
    clients.add(client);
    client.once('end', () => clients.delete(client));
    return client;
  };
  const closeClients = (): void => {
    for (const client of clients) client.disconnect();
    clients.clear();
  };
  const external = process.env.REDIS_URL;
  if (external !== undefined && external !== '' && options.own !== true) {
    const url = new URL(external);
    const port = Number(url.port || 6379);
    const refuse = async (): Promise<void> => {
      throw new Error('REDIS_URL points to a Redis these tests do not control: it cannot be stopped or restarted');
    };
    return {
      host: url.hostname,
      port,
      url: external,
      socketPath: undefined,
      client: (clientOptions = {}) => track(new Redis(external, clientOptions as never)),
      command: (args, timeoutMs) => redisCommand({ host: url.hostname, port }, args, timeoutMs),
      external: true,
      stop: refuse,
      restart: refuse,
      dispose: async () => closeClients(),
    };
  }
  const tcp = options.tcp !== false;
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-redis-'));
  const socketPath = join(dir, 'redis.sock');
  let server: RedisProcess;
  try {
    server = await startWithFreshPorts(tcp ? 1 : 0, ([port = 0]) => new RedisProcess(port, socketPath, [...BASE_ARGS, '--dir', dir]));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { port } = server;
  return {
    host: HOST,
    port,
    get url(): string {
      if (port === 0)
        throw new Error(`this redis-server listens on ${socketPath} only (tcp: false): use client(), command() or socketPath`);
      return `redis://${HOST}:${port}`;
    },
    socketPath,
    client: (clientOptions = {}) => track(new Redis({ ...clientOptions, path: socketPath } as never)),
    command: (args, timeoutMs) => redisCommand({ path: socketPath }, args, timeoutMs),
    external: false,
    stop: () => server.stop(),
    restart: () => server.start(),
    dispose: async () => {
      closeClients();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis Cluster of masters on 127.0.0.1, slots spread evenly, no replicas. */
export interface RedisCluster {
  readonly nodes: readonly { host: string; port: number; socketPath: string }[];
  /** Stops every node and removes their directory. */
  dispose(): Promise<void>;
}

/**
 * Starts `size` cluster-enabled redis-servers (the cluster bus needs TCP: client and bus ports
 * both picked free, bound, and picked again when taken; no port + 10000 arithmetic), joins them
 * with `redis-cli --cluster create`, and waits until every node reports `cluster_state:ok`.
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
      const socketPath = join(dir, `node-${i}.sock`);
      const server = await startWithFreshPorts(2, ([port, busPort]) => {
        const args = [
          ...BASE_ARGS,
          '--dir',
          dir,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${i}.conf`),
          '--cluster-node-timeout',
          '2000',
          '--cluster-port',
          String(busPort),
        ];
        return new RedisProcess(port!, socketPath, args);
      });
      servers.push(server);
    }
    await createCluster(servers.map((s) => s.port));
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (const server of servers) {
      for (;;) {
        const info = await redisCommand({ path: server.socketPath }, ['CLUSTER', 'INFO']);
        if (typeof info === 'string' && info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${size}`)) break;
        if (Date.now() > deadline)
          throw new Error(`redis cluster node ${server.port} is not ok after ${START_TIMEOUT_MS} ms:\n${String(info)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return { nodes: servers.map((s) => ({ host: HOST, port: s.port, socketPath: s.socketPath })), dispose };
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
