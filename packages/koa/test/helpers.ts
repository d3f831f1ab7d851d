import { createServer, type Server } from 'node:http';
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
export async function post(
  url: string,
  request: { headers: Record<string, string>; body: Buffer | string },
  headers: Record<string, string | undefined> = {},
) {
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
