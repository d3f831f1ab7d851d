import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { afterEach } from 'vitest';
import { buildSignedRequest, createTestKeyPair, type TestEventOverrides } from '@jobhook/core/testing';

export const keys = createTestKeyPair();

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** Listens on 127.0.0.1, port 0; closed after each test. Returns the base URL. */
export async function listen(app: Koa<any, any>): Promise<string> {
  const server = createServer(app.callback());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A signed delivery, ready for `fetch(url, ...)`. */
export function signed(overrides: TestEventOverrides = {}) {
  return buildSignedRequest(overrides, { privateKey: keys.privateKey });
}

/** POSTs a request built by {@link signed} (headers may be overridden) and reads the JSON answer. */
export async function post(url: string, request: { headers: Record<string, string>; body: Buffer | string }, headers: Record<string, string | undefined> = {}) {
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...request.headers, ...headers })) if (value !== undefined) merged[name] = value;
  const res = await fetch(url, { method: 'POST', headers: merged, body: request.body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** A promise with its resolve function, to hold a handler open. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** What the client saw when it sent a request head and the first chunk of a body it never finished. */
export interface UnfinishedUpload {
  status: number;
  /** The answer's `Connection` header. */
  connection: string | undefined;
  body: { error?: { code: string; message: string } };
  /** Body bytes the client had written when the answer arrived: the first chunk, nothing more. */
  sentWhenAnswered: number;
  /** Resolves when the server has closed the connection (the client never does). */
  closedByServer: Promise<void>;
}

/**
 * POSTs `headers` and a first 1 KiB chunk of a body that never ends (the rest of a declared
 * `Content-Length` never comes; without one, the chunked body is never terminated), then waits for
 * the answer: a server that waited for the body would never give one.
 */
export function sendUnfinishedBody(url: string, headers: Record<string, string>): Promise<UnfinishedUpload> {
  const first = Buffer.alloc(1024, 0x20);
  return new Promise((resolve, reject) => {
    let sent = 0;
    const req = httpRequest(url, { method: 'POST', headers });
    req.on('error', () => {}); // a write racing the server's close: the answer below is what counts
    req.on('socket', (socket) => socket.on('error', () => {}));
    req.on('response', (res) => {
      const sentWhenAnswered = sent;
      const closedByServer = new Promise<void>((done) => res.socket.once('close', () => done()));
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text), sentWhenAnswered, closedByServer }));
      res.on('error', reject);
    });
    req.write(first);
    sent += first.length;
  });
}
