// Done-when of "no body is read unless a configured key decodes its signature", against the Express
// and Fastify example receivers as users start them (child processes, real sockets, default options):
// 1,000 connections each announce a 1 MiB body, send all of it but the last byte and hold. With
// made-up signatures (the right length, no key decodes them) every one is refused from its head; with
// one real signature replayed over them (signed with the demo key for another body), one body per
// signature and client is read at a time (within maxBodyBytesInFlight, charged as bytes arrive), the
// rest answered 503 ERR_RECEIVER_BUSY at once, and the read ones 503 ERR_BODY_TIMEOUT at their deadline. Either way the server's peak RSS grows by
// less than 300 MB, and a genuine delivery sent meanwhile is answered 200. Run `npx tsc -b` first.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildSignedRequest } from '@jobhook/core/testing';
import { sampleSum } from '../../packages/core/test/helpers/prometheus-text.js';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';
import { startExampleReceiver, type ExampleFramework, type ExampleReceiver } from '../helpers/e2e-example-receiver.js';

const DEMO_PUBLIC = join(REPO_ROOT, 'examples/keys/demo.public.pem');
const DEMO_PRIVATE = readFileSync(join(REPO_ROOT, 'examples/keys/demo.private.pem'), 'utf8');
const CONNECTIONS = 1000;
const MIB = 1024 * 1024;
const RSS_GROWTH_LIMIT = 300 * 1000 * 1000;
/** Every held connection but the last byte of its body: what a slow upload leaves in a server that reads it. */
const ALMOST_ALL = Buffer.alloc(MIB - 1, 0x20);

/** A delivery signed with the demo key (the examples' key pair): 3072 bits, so a signature of 384 bytes. */
const genuine = () => buildSignedRequest({}, { privateKey: DEMO_PRIVATE });

/** Resident and peak resident set size of a process, in bytes (Linux). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** What one held connection got back: status and error code (parsed from the raw answer), or nothing before it closed. */
interface HeldAnswer {
  status: number | undefined;
  code: string | undefined;
  retryAfter: string | undefined;
}

/**
 * Opens `count` connections (100 at a time, so the listen backlog never overflows), each sending the
 * head of a 1 MiB body with `signature`, then all of the body but its last byte; resolves once every
 * connection has been answered and closed by the server (it never is by the client).
 */
async function holdSlowBodies(port: number, path: string, count: number, signature: string) {
  const sockets: Socket[] = [];
  const answers: Promise<HeldAnswer>[] = [];
  const head = [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    `Content-Length: ${MIB}`,
    `X-Service-Signature: ${signature}`,
    '',
    '',
  ].join('\r\n');
  for (let batch = 0; batch < count; batch += 100) {
    const opened: Promise<void>[] = [];
    for (let i = batch; i < Math.min(count, batch + 100); i++) {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => {}); // EPIPE / ECONNRESET once the server closed: expected
      let raw = '';
      socket.on('data', (chunk: Buffer) => {
        if (raw.length < 8192) raw += chunk.toString('latin1');
      });
      answers.push(new Promise<HeldAnswer>((resolve) => socket.once('close', () => resolve(parseAnswer(raw)))));
      opened.push(
        new Promise<void>((resolve) =>
          socket.once('connect', () => {
            socket.write(head);
            socket.write(ALMOST_ALL);
            resolve();
          }),
        ),
      );
    }
    await Promise.all(opened);
  }
  const destroy = (): void => {
    for (const socket of sockets) socket.destroy();
  };
  return { all: Promise.all(answers), destroy };
}

function parseAnswer(raw: string): HeldAnswer {
  const status = /^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1];
  const code = /"code":"([A-Z_]+)"/.exec(raw)?.[1];
  const retryAfter = /\r\nretry-after: *(\S+)/i.exec(raw)?.[1];
  return { status: status === undefined ? undefined : Number(status), code, retryAfter };
}

function tally(answers: readonly HeldAnswer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) {
    const key = `${a.status ?? 'none'} ${a.code ?? ''}`.trim();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** The app's refusals so far by error code, from its GET /metrics (the server's own count of every request). */
async function refusals(receiver: ExampleReceiver, code: string): Promise<number> {
  const text = await (await fetch(`${receiver.baseUrl}/metrics`)).text();
  return sampleSum(text, 'jobhook_webhooks_total', { outcome: 'rejected', code });
}

/**
 * The answers the clients could read. A server that closes a connection with body bytes still
 * unread in its socket sends a reset, and a reset can overtake the answer on the client's side: such
 * a connection saw no answer (`none`). The server's own count is in its metrics.
 */
function readAnswers(answers: readonly HeldAnswer[]): HeldAnswer[] {
  return answers.filter((a) => a.status !== undefined);
}

async function deliver(receiver: ExampleReceiver): Promise<{ status: number; retryAfter: string | null; jobId: string }> {
  const delivery = genuine();
  const res = await fetch(receiver.webhookUrl, { method: 'POST', headers: delivery.headers, body: delivery.body });
  await res.arrayBuffer();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), jobId: delivery.event.job_id };
}

describe.each<ExampleFramework>(['express', 'fastify'])('%s example receiver: 1,000 held 1 MiB bodies', (framework) => {
  let receiver: ExampleReceiver;
  let path: string;

  beforeAll(async () => {
    receiver = await startExampleReceiver({ framework, publicKeyPath: DEMO_PUBLIC });
    path = new URL(receiver.webhookUrl).pathname;
    // Warm up (first requests load code): what is measured next is the attack.
    expect((await deliver(receiver)).status).toBe(200);
  });
  afterAll(async () => {
    expect(await receiver.stop()).toBe(0);
  });

  test('made-up signatures of the right length: all refused 401 from the head, RSS growth under 300 MB, a genuine delivery meanwhile 200', async () => {
    const before = memoryOf(receiver.pid);
    const invalidBefore = await refusals(receiver, 'ERR_SIGNATURE_INVALID');
    const madeUp = 'ab'.repeat(384);
    const held = await holdSlowBodies(receiver.port, path, CONNECTIONS, madeUp);
    try {
      const meanwhile = await deliver(receiver);
      expect(meanwhile.status).toBe(200);
      const answers = await held.all;
      expect(await refusals(receiver, 'ERR_SIGNATURE_INVALID')).toBe(invalidBefore + CONNECTIONS);
      const read = readAnswers(answers);
      expect(read.length).toBeGreaterThan(CONNECTIONS / 2);
      expect(tally(read)).toEqual({ '401 ERR_SIGNATURE_INVALID': read.length });
      const growth = memoryOf(receiver.pid).peak - before.rss;
      expect(growth, `peak RSS grew by ${(growth / 1e6).toFixed(0)} MB`).toBeLessThan(RSS_GROWTH_LIMIT);
      await receiver.waitForHandled([meanwhile.jobId], 10_000);
    } finally {
      held.destroy();
    }
  });

  test('one real signature replayed over every body: 503s with Retry-After (busy, or the body too slow), RSS growth under 300 MB, a genuine delivery meanwhile 200, and 200 after', async () => {
    const before = memoryOf(receiver.pid);
    const [busyBefore, slowBefore] = [await refusals(receiver, 'ERR_RECEIVER_BUSY'), await refusals(receiver, 'ERR_BODY_TIMEOUT')];
    const replayed = genuine().signature;
    const held = await holdSlowBodies(receiver.port, path, CONNECTIONS, replayed);
    try {
      // One replayed body is read at a time (one signature, one client), so the budget is never under
      // pressure: the genuine delivery is handled at once.
      const meanwhile = await deliver(receiver);
      expect(meanwhile.status).toBe(200);
      const answers = await held.all;
      // Every held body is answered 503: refused unread while another body of the same signature and
      // client was being read (or the budget was spent), or read until its deadline.
      const busy = (await refusals(receiver, 'ERR_RECEIVER_BUSY')) - busyBefore;
      const slow = (await refusals(receiver, 'ERR_BODY_TIMEOUT')) - slowBefore;
      expect(busy + slow).toBe(CONNECTIONS);
      // One is read at a time; how many in all depends on how fast the heads arrive (one that timed
      // out frees its place for the next), so the bound checked is the memory below.
      expect(slow).toBeGreaterThan(0);
      const read = readAnswers(answers);
      expect(read.length).toBeGreaterThan(CONNECTIONS / 2);
      expect(read.every((a) => a.status === 503 && Number(a.retryAfter) > 0)).toBe(true);
      const growth = memoryOf(receiver.pid).peak - before.rss;
      expect(growth, `peak RSS grew by ${(growth / 1e6).toFixed(0)} MB`).toBeLessThan(RSS_GROWTH_LIMIT);
      // The attack over, the budget is free again.
      expect((await deliver(receiver)).status).toBe(200);
    } finally {
      held.destroy();
    }
  });
});
