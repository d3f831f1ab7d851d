// A throwaway redis-server for the benchmarks (the same settings as the store tests' helper):
// Debian's binary on PATH, a free port on 127.0.0.1, a temporary directory, nothing persisted.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HOST = '127.0.0.1';

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** True when `port` answers PING with +PONG within `timeoutMs`. */
function ping(port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port });
    const done = (ok) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

/**
 * Starts redis-server and waits for PING. Returns `{ url, port, version, stop() }`; `stop()` sends
 * SIGTERM, waits for the exit and removes the directory. The server is killed at process exit too.
 */
export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-bench-redis-'));
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let failure;
  child.stdout.on('data', (c) => (output = (output + c).slice(-4000)));
  child.stderr.on('data', (c) => (output = (output + c).slice(-4000)));
  child.once(
    'error',
    (err) => (failure = err.code === 'ENOENT' ? 'redis-server is not on PATH (apt-get install redis-server)' : err.message),
  );
  child.once('exit', (code, signal) => (failure ??= `redis-server exited (${signal ?? `code ${code}`}):\n${output}`));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);

  const deadline = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (failure !== undefined || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`could not start redis-server for the stores benchmark: ${failure ?? 'no PONG in 10 s'}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const version = /version=(\d+\.\d+\.\d+)/.exec(output)?.[1] ?? 'unknown';
  return {
    url: `redis://${HOST}:${port}`,
    port,
    version,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
