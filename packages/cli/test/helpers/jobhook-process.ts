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
