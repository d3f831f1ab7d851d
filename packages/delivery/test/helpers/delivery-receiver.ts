/**
 * A real local HTTP receiver (127.0.0.1, port 0) for delivery tests: records every request (raw
 * body included) and answers as a script says.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/** One request as the receiver got it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** `Date.now()` when the request's body was complete. */
  at: number;
}

/** Answers request number `n` (0-based). */
export type ReceiverScript = (req: ReceivedRequest, res: ServerResponse, n: number, raw: IncomingMessage) => void;

export interface DeliveryReceiver {
  port: number;
  /** `http://127.0.0.1:<port><path>` (`http://[::1]:…` when listening on `::1`). */
  url(path?: string): string;
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** Answers `status` with optional headers and body. */
export function answer(status: number, headers: Record<string, string> = {}, body = ''): ReceiverScript {
  return (_req, res) => {
    res.writeHead(status, headers).end(body);
  };
}

/** Answers request n with `scripts[n]`, and the last script from then on. */
export function sequence(...scripts: ReceiverScript[]): ReceiverScript {
  return (req, res, n, raw) => (scripts[Math.min(n, scripts.length - 1)] as ReceiverScript)(req, res, n, raw);
}

/** Never answers (until the client gives up or the server closes). */
export const hang: ReceiverScript = () => {};

/** Destroys the connection after reading the request: the client sees ECONNRESET. */
export const reset: ReceiverScript = (_req, _res, _n, raw) => {
  raw.socket.destroy();
};

/** Starts a receiver on `host` (default 127.0.0.1; `::1` for an IPv6-only one). */
export async function startDeliveryReceiver(script: ReceiverScript = answer(200), host = '127.0.0.1'): Promise<DeliveryReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.on('end', () => {
      const req: ReceivedRequest = {
        method: raw.method ?? '',
        path: raw.url ?? '',
        headers: raw.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      const n = requests.push(req) - 1;
      script(req, res, n, raw);
    });
  });
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    port,
    url: (path = '/hook') => `${origin}${path}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port on 127.0.0.1 nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
