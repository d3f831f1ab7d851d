import type { AddressInfo } from 'node:net';
import { request as httpRequest, type Server } from 'node:http';
import express, { type Express } from 'express';
import type { SignedTestRequest } from '@jobhook/core/testing';

/** A running app on 127.0.0.1 and a random port. */
export interface RunningApp {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Builds an Express app with `mount`, starts it on port 0 and returns its URL. */
export async function startApp(mount: (app: Express) => void): Promise<RunningApp> {
  const app = express();
  mount(app);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a test reads back from one request. */
export interface Answer {
  status: number;
  headers: Headers;
  body: { ok?: boolean; job_id?: string; duplicate?: boolean; error?: { code: string; message: string } };
}

/** POSTs a signed test request (or anything fetch takes) and parses the JSON answer. */
export async function send(url: string, request: Pick<SignedTestRequest, 'headers' | 'body'> & { method?: string }): Promise<Answer> {
  const res = await fetch(url, { method: request.method ?? 'POST', headers: request.headers, body: request.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Answer['body'] };
}

/** A promise with its resolver, to hold a handler until the test lets it go. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
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
