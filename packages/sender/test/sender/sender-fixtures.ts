// Shared fixtures of the sender API tests: two organizations with keys in every state, a real
// webhook receiver (core's createReceiver behind node:http), and a raw-socket HTTP client for
// header forms fetch refuses to send.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { createReceiver, type AsyncJobCompletedEvent } from '@jobhook/core';
import { createTestKeyPair } from '@jobhook/core/testing';
import { createSender, type AccountsConfig, type Sender, type SenderOptions } from '../../src/index.js';

export const TOKENS = {
  inference: 'acme_inf_4fQz9LmN2xVb7Rt1Kp0s',
  poor: 'acme_inf_poorPoorPoor00000001',
  uncapped: 'acme_inf_uncappedUncapped0001',
  revoked: 'acme_inf_revokedRevoked000001',
  expired: 'acme_inf_expiredExpired000001',
  legacy: 'acme_inf_legacyLegacyLegacy01',
  management: 'acme_mgmt_M4nag3Ment0Key9Zx7',
  managementNoScope: 'acme_mgmt_noScopeNoScope00001',
  globexInference: 'glx_inf_globexGlobexGlobex001',
  globexManagement: 'glx_mgmt_globexGlobexGlobex01',
} as const;

export const KEY_IDS = {
  inference: '11111111-1111-4111-8111-111111111111',
  poor: '22222222-2222-4222-8222-222222222222',
  uncapped: '33333333-3333-4333-8333-333333333333',
  revoked: '44444444-4444-4444-8444-444444444444',
  expired: '55555555-5555-4555-8555-555555555555',
  management: '66666666-6666-4666-8666-666666666666',
  managementNoScope: '77777777-7777-4777-8777-777777777777',
  globexInference: '88888888-8888-4888-8888-888888888888',
  globexManagement: '99999999-9999-4999-8999-999999999999',
} as const;

/** A fresh copy each time: tests may mutate it. */
export function accountsFixture(): AccountsConfig {
  const key = (over: Record<string, unknown>) => ({
    kind: 'inference',
    member: 'ada@acme.test',
    active_balance: true,
    balance: 1000,
    expire_time: null,
    revoked: false,
    revoked_at: null,
    ...over,
  });
  return JSON.parse(
    JSON.stringify({
      organizations: [
        {
          id: 'acme',
          name: 'Acme',
          members: ['ada@acme.test', 'bob@acme.test'],
          keys: [
            key({ id: KEY_IDS.inference, token: TOKENS.inference, name: 'backend', token_type: 'api_token' }),
            key({ id: KEY_IDS.poor, token: TOKENS.poor, name: 'poor', balance: 0.05 }),
            key({
              id: KEY_IDS.uncapped,
              token: TOKENS.uncapped,
              name: 'uncapped',
              active_balance: false,
              balance: null,
              member: 'bob@acme.test',
            }),
            key({ id: KEY_IDS.revoked, token: TOKENS.revoked, name: 'old', revoked: true, revoked_at: '2025-06-01T12:00:00Z' }),
            key({ id: KEY_IDS.expired, token: TOKENS.expired, name: 'expired', expire_time: '2020-01-01T00:00:00Z' }),
            key({ id: null, token: TOKENS.legacy, name: 'legacy' }),
            key({
              id: KEY_IDS.management,
              token: TOKENS.management,
              kind: 'management',
              name: 'admin',
              scopes: ['manage:read'],
              active_balance: false,
              balance: null,
              token_type: 'sandbox_api_token',
            }),
            key({ id: KEY_IDS.managementNoScope, token: TOKENS.managementNoScope, kind: 'management', name: 'no scope', balance: null }),
          ],
        },
        {
          id: 'globex',
          members: ['eve@globex.test'],
          keys: [
            key({ id: KEY_IDS.globexInference, token: TOKENS.globexInference, name: 'globex', member: 'eve@globex.test' }),
            key({
              id: KEY_IDS.globexManagement,
              token: TOKENS.globexManagement,
              kind: 'management',
              name: 'globex admin',
              member: 'eve@globex.test',
              scopes: ['manage:read'],
              balance: null,
            }),
          ],
        },
      ],
    }),
  ) as AccountsConfig;
}

/** A sender for tests: fixture accounts, a 2048-bit test key, fast jobs and retries, loopback receivers allowed. */
export async function startTestSender(options: SenderOptions = {}): Promise<{ sender: Sender; baseUrl: string }> {
  const sender = await createSender({
    accounts: accountsFixture(),
    privateKey: createTestKeyPair().privateKey,
    jobDelayMs: 5,
    retryBaseMs: 20,
    maxRetryDelayMs: 100,
    attemptTimeoutMs: 1000,
    allowInsecureReceivers: true,
    receiverAllowlist: ['127.0.0.0/8'],
    ...options,
  });
  const baseUrl = await sender.listen({ port: 0 });
  return { sender, baseUrl };
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export function jsonHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/** POSTs a job and returns the status and parsed answer. */
export async function submitJob(
  baseUrl: string,
  token: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const res = await fetch(`${baseUrl}/v3/universal-ai/async`, {
    method: 'POST',
    headers: jsonHeaders(token),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown>, text };
}

/**
 * How long {@link waitFor} and {@link pollUntilFinal} wait before giving up: a hang guard, not a
 * speed check (nothing here asserts how fast a busy machine is). It stays under vitest's test
 * timeout (60 s) only so that a wait that never ends fails naming what it waited for.
 */
const HANG_GUARD_MS = 45_000;

/** Polls until the job is final (or the hang guard runs out) and returns the answer's text. */
export async function pollUntilFinal(
  baseUrl: string,
  token: string,
  jobId: string,
  timeoutMs = HANG_GUARD_MS,
): Promise<{ json: Record<string, unknown>; text: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers: bearer(token) });
    const text = await res.text();
    const json = JSON.parse(text) as Record<string, unknown>;
    if (json.status === 'success' || json.status === 'fail') return { json, text };
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${String(json.status)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits until `check()` is true; throws with `what` when the hang guard runs out. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = HANG_GUARD_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One request a test receiver got. */
export interface ReceivedRequest {
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
  status: number;
  event: AsyncJobCompletedEvent | undefined;
}

/** A real webhook receiver: core's pipeline verifying with the sender's public key. */
export interface TestReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Status to answer, per request index; defaults to the pipeline's own answer. */
  answerWith: (index: number) => number | undefined;
  close(): Promise<void>;
}

export async function startReceiver(
  publicKeyPem: string,
  answerWith: (index: number) => number | undefined = () => undefined,
): Promise<TestReceiver> {
  // No dedupe memory across redeliveries would hide them: the raw requests are recorded anyway.
  const receiver = createReceiver({ publicKeys: publicKeyPem, onEvent: () => {} });
  const requests: ReceivedRequest[] = [];
  const state: TestReceiver = {
    url: '',
    requests,
    answerWith,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await receiver.close();
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const index = requests.length;
      const forced = state.answerWith(index);
      void receiver.handle({ method: req.method ?? 'POST', headers: req.headers, rawBody }).then((answer) => {
        const status = forced ?? answer.status;
        requests.push({ headers: req.headers, rawBody, status: answer.status, event: answer.event });
        res.writeHead(status, { 'content-type': 'application/json' }).end(forced === undefined ? answer.body : '{}');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  state.url = `http://127.0.0.1:${address.port}/hooks/jobs`;
  return state;
}

/** An HTTP answer read from a raw socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body` as raw bytes. */
export async function rawRequest(baseUrl: string, head: string, body = ''): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const payload = Buffer.concat([
    Buffer.from(
      `${head}\r\nHost: ${hostname}\r\nConnection: close\r\n${body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`}\r\n`,
      'latin1',
    ),
    Buffer.from(body, 'utf8'),
  ]);
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
    socket.write(payload);
  });
  const split = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rawBody = text.slice(split + 4);
  if (headers['transfer-encoding'] === 'chunked') rawBody = dechunk(rawBody);
  return { status: Number(statusLine.split(' ')[1]), headers, body: rawBody };
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}
