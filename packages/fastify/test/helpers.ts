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
