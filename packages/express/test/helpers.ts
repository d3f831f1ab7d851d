import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
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
