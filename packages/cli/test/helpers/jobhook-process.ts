/**
 * What the CLI's end-to-end tests share: the BUILT `jobhook` binary spawned as a real process, and a
 * real receiver (core's pipeline) behind node:http on a free port.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Receiver } from '@jobhook/core';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The built binary (`npx tsc -b` first). */
export const BIN = resolve(HERE, '../../dist/bin.js');
/** The repository root, the binary's working directory. */
export const REPO = resolve(HERE, '../../../..');
/** The demo private key (PEM file) the examples sign with. */
export const DEMO_PRIVATE_KEY = resolve(REPO, 'examples/keys/demo.private.pem');
/** The demo public key (PEM file) the examples verify with. */
export const DEMO_PUBLIC_KEY = resolve(REPO, 'examples/keys/demo.public.pem');

/** How a run of the binary ended. */
export interface JobhookRun {
  code: number | null;
  out: string;
  err: string;
}

/** Spawns `jobhook ...args` with `input` on stdin (always ended, so a command reading it never waits). */
export function runJobhook(args: readonly string[], input = ''): Promise<JobhookRun> {
  if (!existsSync(BIN)) return Promise.reject(new Error(`${BIN} is missing: build first (npx tsc -b)`));
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, out, err }));
    child.stdin.on('error', () => {}); // the command may exit before reading all of stdin
    child.stdin.end(input);
  });
}

/** A receiver served over HTTP; `current()` is asked per request, so a test may swap receivers. */
export interface ReceiverServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `current()`'s answers on 127.0.0.1 at a free port, path `/hooks`. */
export async function serveReceiver(current: () => Receiver): Promise<ReceiverServer> {
  const server: Server = createServer((req, res) => {
    // Like a framework's router: other paths get a bare 404 (no jobhook error body).
    if (req.url !== '/hooks') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void current()
        .handle({ method: req.method ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) })
        .then((answer) => res.writeHead(answer.status, answer.headers).end(answer.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Spawns `jobhook send --url <target> --private-key <the demo key> ...args`. */
export function runSend(target: string, ...args: string[]): Promise<JobhookRun> {
  return runJobhook(['send', '--url', target, '--private-key', DEMO_PRIVATE_KEY, ...args]);
}

/** A running `jobhook serve` child, once its banner is out. */
export interface ServeChild {
  /** The banner (stdout up to `Stop with …`). */
  banner: string;
  /** The base URL of the banner's `listening on`. */
  baseUrl: string;
  /** A `name:  value` field of the banner (its first word). */
  field(name: string): string;
  /** Everything on stderr so far. */
  err(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `jobhook serve --port 0 ...args` in `cwd` (default the repository: pass `--ephemeral` or
 * a temporary `--state-dir` there) and resolves once the banner is out; rejects when it exits first.
 */
export function startServe(args: readonly string[], options: { cwd?: string } = {}): Promise<ServeChild> {
  if (!existsSync(BIN)) return Promise.reject(new Error(`${BIN} is missing: build first (npx tsc -b)`));
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: options.cwd ?? REPO });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const field = (name: string): string => {
    const match = new RegExp(`${name}:\\s+(\\S+)`).exec(out);
    if (match === null) throw new Error(`no '${name}' in the banner:\n${out}`);
    return match[1]!;
  };
  return new Promise((resolvePromise, reject) => {
    const onData = (): void => {
      if (!out.includes('Stop with')) return;
      child.stdout.off('data', onData);
      resolvePromise({
        banner: out,
        baseUrl: /listening on (http:\/\/\S+)/.exec(out)![1]!,
        field,
        err: () => err,
        stop: (signal = 'SIGTERM') => {
          child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout.on('data', onData);
    void exited.then((code) => reject(new Error(`serve exited ${code} before its banner:\n${out}\n${err}`)));
  });
}
