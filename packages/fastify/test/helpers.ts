import { request as httpRequest } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Receiver, ReceiverOptions } from '@jobhook/core';
import { buildSignedRequest, createTestKeyPair, type SignedTestRequest, type TestEventOverrides } from '@jobhook/core/testing';
import { jobhookFastify } from '../src/index.js';

export const keys = createTestKeyPair();
export const PATH = '/webhooks/jobs';

/** A signed request with the test key. */
export function signed(overrides: TestEventOverrides = {}): SignedTestRequest {
  return buildSignedRequest(overrides, { privateKey: keys.privateKey });
}

/** Receiver options with the test key and a recording handler (`calls`). */
export function receiverOptions(extra: Partial<ReceiverOptions> = {}): ReceiverOptions & { calls: string[] } {
  const calls: string[] = [];
  return {
    publicKeys: keys.publicKeyPem,
    onEvent: (event) => {
      calls.push(event.job_id);
    },
    ...extra,
    calls,
  };
}

/** What {@link buildApp} takes: a receiver or its options, and the path, in one object (tests only). */
export type TestAppOptions = (ReceiverOptions & { path?: string }) | { receiver: Receiver; path?: string };

/** A Fastify app with the plugin registered; `setup` runs before the plugin (hooks, parsers, routes). */
export async function buildApp(options: TestAppOptions, setup: (app: FastifyInstance) => void = () => {}): Promise<FastifyInstance> {
  const { path, ...rest } = options;
  const receiverOrOptions = 'receiver' in rest ? rest.receiver : (rest as ReceiverOptions);
  const app = Fastify();
  setup(app);
  app.register(jobhookFastify(receiverOrOptions, path === undefined ? undefined : { path }));
  await app.ready();
  return app;
}

/** Listens on 127.0.0.1, port 0; returns the webhook URL. */
export async function listen(app: FastifyInstance, path = PATH): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${path}`;
}

/** POSTs a signed request with fetch; answers status, headers and parsed JSON body. */
export async function post(
  url: string,
  request: { headers: Record<string, string>; body: Uint8Array | string },
): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? undefined : JSON.parse(text) };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
