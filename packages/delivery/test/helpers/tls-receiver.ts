/**
 * A real local HTTPS receiver (127.0.0.1, port 0) with a fresh self-signed certificate made by
 * openssl (what a user would use too), for tests of certificate and name checks.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A listening HTTPS receiver and the certificate (PEM) a client must trust to reach it. */
export interface TlsReceiver {
  server: Server;
  port: number;
  /** The self-signed certificate, to pass as `ca`. */
  cert: string;
  close(): Promise<void>;
}

/**
 * Starts an HTTPS server whose certificate names `commonName` with `subjectAltName` (an openssl
 * `-addext` value, e.g. `DNS:*.corp.internal`); `handler` answers each request.
 */
export async function startTlsReceiver(
  names: { commonName: string; subjectAltName: string },
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TlsReceiver> {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-tls-'));
  let cert: string;
  let server: Server;
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        `/CN=${names.commonName}`,
        '-addext',
        `subjectAltName=${names.subjectAltName}`,
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, handler);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    server,
    port: (server.address() as AddressInfo).port,
    cert,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
