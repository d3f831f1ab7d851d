// `jobhook send`'s progress line and latency summary: the mode chosen from the flags and stderr,
// the line's counts under vitest's fake timers, the summary's figures, and a real run through `main`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSendProgress, latencySummary, progressMode } from '../src/commands/send-progress.js';
import { main } from '../src/index.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const PRIVATE_KEY = join(REPO, 'examples/keys/demo.private.pem');

/** A stderr stand-in that collects what is written, a terminal or not. */
function stderrLike(isTTY: boolean): PassThrough & { isTTY?: boolean; text: () => string } {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; text: () => string };
  if (isTTY) stream.isTTY = true;
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
  stream.text = () => text;
  return stream;
}

describe('progressMode', () => {
  it.each([
    [undefined, undefined, true, 'tty'],
    [undefined, undefined, false, 'off'],
    [true, undefined, true, 'tty'],
    [true, undefined, false, 'lines'],
    [undefined, true, true, 'off'],
    [true, true, false, 'off'],
  ] as const)('--progress %s, --no-progress %s, stderr a terminal %s: %s', (flag, negated, tty, mode) => {
    expect(progressMode(flag, negated, stderrLike(tty))).toBe(mode);
  });
});

describe('latencySummary', () => {
  it('counts, rate, percentiles, mean, standard deviation and maximum', () => {
    const latencies = Array.from({ length: 100 }, (_, i) => i + 1);
    const text = latencySummary(latencies, 3, 2000);
    expect(text).toBe(
      'jobhook send: 100 deliveries in 2.00 s (50.0/s), 97 2xx, 3 errors\n' +
        '  latency  p50 50.0 ms  p90 90.0 ms  p97.5 98.0 ms  p99 99.0 ms  avg 50.5 ms  stdev 28.9 ms  max 100 ms\n',
    );
  });

  it('no delivery: zeros, no division by zero', () => {
    expect(latencySummary([], 0, 0)).toContain('0 deliveries in 0.00 s (0.0/s), 0 2xx, 0 errors');
  });
});

describe('createSendProgress', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('on a terminal: one line rewritten in place with done, in flight, errors and the current rate; then the summary', async () => {
    vi.useFakeTimers();
    const stderr = stderrLike(true);
    let clock = 0;
    const progress = createSendProgress({ stderr, mode: 'tty', total: 10, now: () => clock });
    for (let i = 0; i < 4; i++) progress.started();
    progress.finished(5, true);
    progress.finished(7, true);
    progress.finished(9, false);
    clock = 200;
    vi.advanceTimersByTime(200);
    expect(stderr.text()).toBe('\r\u001b[2Kjobhook send: 3/10 done · 1 in flight · 1 errors · 15/s');
    progress.finished(11, true);
    clock = 400;
    vi.advanceTimersByTime(200);
    expect(stderr.text().split('\r\u001b[2K').at(-1)).toBe('jobhook send: 4/10 done · 0 in flight · 1 errors · 5/s');
    await progress.end();
    // The line is cleared before the summary, and no update follows it.
    expect(stderr.text().split('\r\u001b[2K').at(-1)).toBe(latencySummary([5, 7, 9, 11], 1, 400));
    vi.advanceTimersByTime(5000);
    expect(stderr.text().endsWith(latencySummary([5, 7, 9, 11], 1, 400))).toBe(true);
  });

  it('--progress without a terminal: a plain line a second, then the summary', async () => {
    vi.useFakeTimers();
    const stderr = stderrLike(false);
    let clock = 0;
    const progress = createSendProgress({ stderr, mode: 'lines', total: 2, now: () => clock });
    progress.started();
    vi.advanceTimersByTime(999);
    expect(stderr.text()).toBe('');
    clock = 1000;
    vi.advanceTimersByTime(1);
    progress.finished(3, true);
    clock = 1500;
    await progress.end();
    expect(stderr.text()).toBe(`jobhook send: 0/2 done · 1 in flight · 0 errors · 0/s\n${latencySummary([3], 0, 1500)}`);
  });

  it('off: writes nothing', async () => {
    const stderr = stderrLike(false);
    const progress = createSendProgress({ stderr, mode: 'off', total: 1 });
    progress.started();
    progress.finished(1, false);
    await progress.end();
    expect(stderr.text()).toBe('');
  });
});

describe('jobhook send with a receiver', () => {
  let server: Server;
  let url: string;
  let answered = 0;
  beforeAll(async () => {
    // Every third answer is a 503: errors to count.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        answered++;
        res.writeHead(answered % 3 === 0 ? 503 : 200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  async function send(extra: readonly string[]): Promise<{ code: number; out: string; err: string }> {
    const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: stderrLike(false) };
    io.stdin.end();
    let out = '';
    io.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const code = await main(['send', '--url', url, '--private-key', PRIVATE_KEY, '--count', '30', '--concurrency', '4', ...extra], io);
    return { code, out, err: io.stderr.text() };
  }

  it('--progress writes the latency summary to stderr; stdout keeps its JSON lines', async () => {
    answered = 0;
    const res = await send(['--progress']);
    expect(res.code).toBe(1);
    expect(res.err).toMatch(
      /^(jobhook send: \d+\/30 done · \d+ in flight · \d+ errors · \d+\/s\n)*jobhook send: 30 deliveries in \d+\.\d\d s \(\d+\.\d\/s\), 20 2xx, 10 errors\n {2}latency {2}p50 [\d.]+ ms {2}p90 [\d.]+ ms {2}p97\.5 [\d.]+ ms {2}p99 [\d.]+ ms {2}avg [\d.]+ ms {2}stdev [\d.]+ ms {2}max [\d.]+ ms\n$/,
    );
    expect(res.out.trim().split('\n')).toHaveLength(31);
  });

  it('without a terminal and without --progress: nothing on stderr', async () => {
    answered = 0;
    const res = await send([]);
    expect(res.err).toBe('');
    expect(res.out.trim().split('\n')).toHaveLength(31);
  });
});
