/**
 * `jobhook send` (the BUILT binary, spawned) against a real receiver: core's `createReceiver` behind
 * node:http on a free port, with the demo key pair.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReceiver, type AsyncJobCompletedEvent, type Receiver } from '@jobhook/core';
import { createTestKeyPair } from '@jobhook/core/testing';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/index.js';
import {
  BIN,
  DEMO_PRIVATE_KEY as PRIVATE_KEY,
  DEMO_PUBLIC_KEY as PUBLIC_KEY,
  runJobhook as jobhook,
  runSend as send,
  serveReceiver,
  type ReceiverServer,
} from './helpers/jobhook-process.js';

interface Line {
  job_id: string | null;
  copy: number;
  status: number | null;
  latency_ms: number;
  code: string | null;
  duplicate: boolean | null;
}
interface Summary {
  url: string;
  events: number;
  deliveries: number;
  ok: number;
  by_status: Record<string, number>;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  elapsed_ms: number;
}

/** Runs `jobhook …` in this process with plain streams. */
async function inProcess(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  io.stdin.end();
  const code = await main(args, io);
  io.stdout.end();
  io.stderr.end();
  return { code, out: String(io.stdout.read() ?? ''), err: String(io.stderr.read() ?? '') };
}

function parse(out: string): { lines: Line[]; summary: Summary } {
  const rows = out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line | { summary: Summary });
  const last = rows.pop() as { summary: Summary };
  expect(last).toHaveProperty('summary');
  return { lines: rows as Line[], summary: last.summary };
}

let tmp: string;
let server: ReceiverServer;
let receiver: Receiver;
let url: string;
const handled: AsyncJobCompletedEvent[] = [];

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b)`);
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-send-'));
  receiver = createReceiver({
    publicKeys: readFileSync(PUBLIC_KEY),
    onEvent: (event) => {
      handled.push(event);
    },
  });
  server = await serveReceiver(() => receiver);
  url = server.url;
});

afterAll(async () => {
  await server.close();
  await receiver.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('jobhook send', () => {
  it('delivers 5 events 3 times each: the handler runs 5 times, all 15 answers are 200', async () => {
    const before = handled.length;
    const res = await send(url, '--count', '5', '--duplicates', '2', '--concurrency', '3');
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    const { lines, summary } = parse(res.out);
    expect(lines).toHaveLength(15);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(['job_id', 'copy', 'status', 'latency_ms', 'code', 'duplicate']);
      expect(line.status).toBe(200);
      expect(line.code).toBeNull();
      expect(line.latency_ms).toBeGreaterThan(0);
      // the first copy is handled, the later ones are acknowledged as duplicates
      expect(line.duplicate).toBe(line.copy > 0);
    }
    const jobIds = [...new Set(lines.map((l) => l.job_id))];
    expect(jobIds).toHaveLength(5);
    for (const id of jobIds) expect(lines.filter((l) => l.job_id === id).map((l) => l.copy)).toEqual([0, 1, 2]);

    const ran = handled.slice(before);
    expect(ran).toHaveLength(5);
    expect(ran.map((e) => e.job_id).sort()).toEqual([...jobIds].sort());
    expect(ran.every((e) => e.status === 'success')).toBe(true);
    expect(summary).toMatchObject({ url, events: 5, deliveries: 15, ok: 15, by_status: { '200': 15 } });
    expect(summary.p50_ms).toBeGreaterThan(0);
    expect(summary.p95_ms).toBeGreaterThanOrEqual(summary.p50_ms);
    expect(summary.max_ms).toBeGreaterThanOrEqual(summary.p95_ms);
  });

  it('answers with 401 lines and exits 1 when signed with another key', async () => {
    const other = join(tmp, 'other.pem');
    writeFileSync(other, createTestKeyPair(3072).privateKeyPem);
    const before = handled.length;
    const res = await jobhook(['send', '--url', url, '--private-key', other, '--count', '2', '--duplicates', '1', '--status', 'fail']);
    expect(res.code).toBe(1);
    const { lines, summary } = parse(res.out);
    expect(lines.map((l) => [l.status, l.code])).toEqual(Array(4).fill([401, 'ERR_SIGNATURE_INVALID']));
    expect(summary).toMatchObject({ deliveries: 4, ok: 0, by_status: { '401': 4 } });
    expect(handled.length).toBe(before);
  });

  it('sends a --payload file with its job_id and exact numbers; copies get fresh job_ids', async () => {
    const jobId = '5b7c1a52-63a5-4b0e-9d3e-0c7a3b9f6a11';
    const file = join(tmp, 'event.json');
    writeFileSync(
      file,
      JSON.stringify({
        event: 'async_job_completed',
        job_id: jobId,
        status: 'success',
        feature: 'ocr',
        subfeature: 'ocr_async',
        provider: 'amazon',
        model: null,
        // Just now: the receiver refuses events older than its replay window (a week).
        created_at: new Date(Date.now() - 1000).toISOString().replace('Z', '+00:00'),
        finished_at: new Date().toISOString().replace('Z', '+00:00'),
        output: { text: 'x' },
      }).replace('"output":{"text":"x"}', '"output":{"score":1.0,"n":123456789012345678901234567890}'),
    );
    const before = handled.length;
    const res = await send(url, '--payload', file, '--count', '3', '--body-style', 'canonical');
    expect(res.code, res.err).toBe(0);
    const { lines } = parse(res.out);
    expect(lines.map((l) => l.status)).toEqual([200, 200, 200]);
    const ran = handled.slice(before);
    expect(ran.map((e) => e.job_id)).toContain(jobId);
    expect(new Set(ran.map((e) => e.job_id)).size).toBe(3);
    for (const event of ran) expect(event.output).toEqual({ score: 1, n: '123456789012345678901234567890' });
  });

  it('reports a receiver that is not there (ERR_NETWORK) or silent (ERR_TIMEOUT), exit 1', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const res = await send(`http://127.0.0.1:${port}/`);
    expect(res.code).toBe(1);
    const { lines, summary } = parse(res.out);
    expect(lines).toEqual([expect.objectContaining({ copy: 0, status: null, code: 'ERR_NETWORK', duplicate: null })]);
    expect(summary.by_status).toEqual({ ERR_NETWORK: 1 });
    expect(res.err).toContain('ECONNREFUSED');

    const silent = createServer(() => {}); // takes the request, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const slow = await send(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, '--timeout-ms', '150');
      expect(slow.code).toBe(1);
      const { lines: timedOut } = parse(slow.out);
      expect(timedOut).toEqual([expect.objectContaining({ status: null, code: 'ERR_TIMEOUT' })]);
      // Not before the timeout (timers never fire early); no upper bound: ERR_TIMEOUT already says
      // that the timeout, not something else, ended the attempt.
      expect(timedOut[0]!.latency_ms).toBeGreaterThanOrEqual(150);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('a receiver answering 600 MB (more than a string can hold): reported as status 200, only its start kept, exit 0', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const huge = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        let left = 600;
        const more = (): void => {
          while (left > 0) {
            left--;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end('{}');
        };
        more();
      });
    });
    await new Promise<void>((r) => huge.listen(0, '127.0.0.1', r));
    try {
      const res = await send(`http://127.0.0.1:${(huge.address() as AddressInfo).port}/`, '--timeout-ms', '30000');
      expect(res.code).toBe(0);
      expect(parse(res.out).lines).toEqual([expect.objectContaining({ status: 200, code: null })]);
    } finally {
      huge.closeAllConnections();
      await new Promise<void>((r) => huge.close(() => r()));
    }
  });

  it('a receiver answering 200 then streaming without end: reported as 200 once 64 KiB are in, exit 0', async () => {
    const endless = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(Buffer.alloc(8 * 1024, 0x20)), 5);
        res.on('close', () => clearInterval(timer));
      });
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    try {
      const res = await send(`http://127.0.0.1:${(endless.address() as AddressInfo).port}/`, '--timeout-ms', '10000');
      expect(res.code).toBe(0);
      const [line] = parse(res.out).lines;
      // Reported as 200, not ERR_TIMEOUT: the answer was taken once 64 KiB were in, not held until
      // --timeout-ms (the timer covers the whole answer), and no wall clock is needed to tell so.
      expect(line).toEqual(expect.objectContaining({ status: 200, code: null }));
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((r) => endless.close(() => r()));
    }
  });

  it('says what a bare 404 usually means (a wrong path), once, while a jobhook refusal needs no hint', async () => {
    const wrongPath = new URL('/webhooks/job', url).href;
    const res = await inProcess(['send', '--url', wrongPath, '--private-key', PRIVATE_KEY, '--count', '2']);
    expect(res.code).toBe(1);
    expect(parse(res.out).lines.map((l) => [l.status, l.code])).toEqual([
      [404, null],
      [404, null],
    ]);
    const hints = res.err.split('\n').filter((l) => l.includes('404'));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain('nothing handles webhooks at the path /webhooks/job');
    const refused = await inProcess(['send', '--url', url, '--private-key', PRIVATE_KEY, '--count', '1', '--break', 'body-modified']);
    expect(refused.err).not.toContain('nothing handles webhooks');
  });

  it('suggests the flag a mistyped one meant', async () => {
    const res = await inProcess(['send', '--url', url, '--private-key', PRIVATE_KEY, '--duplicate', '1']);
    expect(res.code).toBe(2);
    expect(res.err).toContain("unknown option '--duplicate'; did you mean '--duplicates'?");
    const far = await inProcess(['send', '--url', url, '--private-key', PRIVATE_KEY, '--zzzzzzzz']);
    expect(far.code).toBe(2);
    expect(far.err).not.toContain('did you mean');
  });

  it('exits 2 naming the flag on a command-line mistake', async () => {
    const cases: [string[], string][] = [
      [['--private-key', PRIVATE_KEY], '--url'],
      [['--url', url], '--private-key'],
      [['--url', 'ftp://x', '--private-key', PRIVATE_KEY], '--url'],
      [['--url', url, '--private-key', PRIVATE_KEY, '--count', '0'], '--count'],
      [['--url', url, '--private-key', PRIVATE_KEY, '--duplicates', 'x'], '--duplicates'],
      [['--url', url, '--private-key', PRIVATE_KEY, '--concurrency', '-1'], '--concurrency'],
      [['--url', url, '--private-key', PRIVATE_KEY, '--body-style', 'yaml'], '--body-style'],
      [['--url', url, '--private-key', PRIVATE_KEY, '--status', 'done'], '--status'],
      [['--url', url, '--private-key', PRIVATE_KEY, '--payload', PUBLIC_KEY, '--status', 'fail'], '--payload'],
    ];
    // The binary once, then the rest in-process through main(): the same code path, without a
    // process start per case.
    const spawned = await jobhook(['send', ...cases[0]![0]]);
    expect(spawned.code).toBe(2);
    expect(spawned.out).toBe('');
    expect(spawned.err).toContain('--url URL is required');
    for (const [args, flag] of cases) {
      const res = await inProcess(['send', ...args]);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.out).toBe('');
      expect(res.err).toContain(flag);
      expect(res.err).toContain('Usage: jobhook send');
    }
    const badKey = await inProcess(['send', '--url', url, '--private-key', PUBLIC_KEY]);
    expect(badKey.code).toBe(2);
    expect(badKey.err).toContain('ERR_KEY_INVALID: this is a public key; signing needs the private key');
    expect(badKey.err).not.toContain('DECODER');
  });
});
