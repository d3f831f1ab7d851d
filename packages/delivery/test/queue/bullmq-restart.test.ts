// The BullMQ queue across processes: worker processes (test/fixtures/queue-worker.mjs, on the BUILT
// sender) deliver to a real local HTTP receiver. A process SIGKILLed while its retries wait in Redis
// loses nothing; two processes on one Redis share the work; no attempt is ever sent twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redisCommand, startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import { createBullmqWorkQueue } from '../../src/queue/bullmq-work-queue.js';
import { sleep, waitUntil } from './queue-harness.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/queue-worker.mjs', import.meta.url));
const BUILT_QUEUE = fileURLToPath(new URL('../../dist/queue/bullmq-work-queue.js', import.meta.url));

let server: RedisServer;
beforeAll(async () => {
  if (!existsSync(BUILT_QUEUE)) throw new Error(`${BUILT_QUEUE} is missing: run \`npx tsc -b\` before these tests`);
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.dispose();
});

/** One request the receiver got. */
interface Hit {
  attempt: string;
  worker: string;
  status: number;
}

/** A local HTTP receiver answering each `x-attempt` with `answer(attempt)`. */
async function startReceiver(answer: (attempt: string) => number, delayMs = 0): Promise<{ url: string; hits: Hit[]; server: Server }> {
  const hits: Hit[] = [];
  const http = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const attempt = String(req.headers['x-attempt']);
      const status = answer(attempt);
      hits.push({ attempt, worker: String(req.headers['x-worker']), status });
      setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end('{}'), delayMs);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`, hits, server: http };
}

interface Worker {
  child: ChildProcess;
  lines: string[];
  exited: Promise<void>;
}

const children: Worker[] = [];
const receivers: Server[] = [];
afterEach(async () => {
  for (const w of children.splice(0)) {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await w.exited;
  }
  await Promise.all(receivers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function startWorker(env: Record<string, string>): Promise<Worker> {
  const child = spawn(process.execPath, [FIXTURE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const worker = { child, lines, exited };
  children.push(worker);
  await waitUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`worker ${env.WORKER_NAME} exited (${child.exitCode}):\n${stderr}`);
      return lines.includes('ready');
    },
    `worker ${env.WORKER_NAME} to be ready`,
    10_000,
  );
  return worker;
}

/** Enqueues deliveries from this process, as the API of another sender process would. */
async function enqueue(prefix: string, jobIds: readonly string[]): Promise<void> {
  const producer = await createBullmqWorkQueue({ connection: server.url, prefix });
  try {
    await Promise.all(jobIds.map((jobId) => producer.enqueueDelivery({ jobId, round: 0, attempt: 1 })));
  } finally {
    await producer.close();
  }
}

/** Requests per `jobId/round/attempt`. */
function tally(hits: readonly Hit[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const hit of hits) counts.set(hit.attempt, (counts.get(hit.attempt) ?? 0) + 1);
  return counts;
}

describe('BullMQ work queue across processes', () => {
  it('loses nothing and sends nothing twice when a worker is SIGKILLed while retries are delayed', async () => {
    const prefix = `jobhook-restart-${randomUUID().slice(0, 8)}`;
    const jobIds = Array.from({ length: 50 }, () => randomUUID());
    const receiver = await startReceiver((attempt) => (attempt.endsWith('/0/1') ? 500 : 200));
    receivers.push(receiver.server);
    const env = { REDIS_URL: server.url, QUEUE_PREFIX: prefix, RECEIVER_URL: receiver.url, RETRY_DELAY_MS: '2000', CONCURRENCY: '8' };

    const first = await startWorker({ ...env, WORKER_NAME: 'first' });
    await enqueue(prefix, jobIds);
    // Kill only once every first attempt got its 500 AND its retry is in Redis AND no handler is
    // active: then nothing is in flight, so nothing may be sent twice.
    await waitUntil(
      () => first.lines.filter((l) => l.startsWith('retry-enqueued ')).length === jobIds.length,
      'all retries to be enqueued',
    );
    await waitUntil(
      async () => (await redisCommand(server.port, ['LLEN', `${prefix}:sender-deliveries:active`])) === 0,
      'no active delivery',
    );
    expect(receiver.hits.filter((h) => !h.attempt.endsWith('/0/1'))).toEqual([]); // still inside the 2 s retry delay
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await redisCommand(server.port, ['ZCARD', `${prefix}:sender-deliveries:delayed`])).toBe(jobIds.length);

    await startWorker({ ...env, WORKER_NAME: 'second' });
    await waitUntil(() => receiver.hits.filter((h) => h.status === 200).length === jobIds.length, 'every delivery to get its 200', 10_000);
    await sleep(200); // a duplicate would show up now

    const counts = tally(receiver.hits);
    const expected = jobIds.flatMap((id) => [`${id}/0/1`, `${id}/0/2`]).sort();
    expect([...counts.keys()].sort()).toEqual(expected);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(receiver.hits.filter((h) => h.status === 200).every((h) => h.worker === 'second')).toBe(true);
  });

  it('shares 200 deliveries between two workers on one Redis, each attempt sent exactly once', async () => {
    const prefix = `jobhook-share-${randomUUID().slice(0, 8)}`;
    const jobIds = Array.from({ length: 200 }, () => randomUUID());
    const flaky = new Set<string>(jobIds.filter((_, i) => i % 5 === 0));
    // Every fifth job fails its first attempt, so retries are shared too; 5 ms per answer.
    const receiver = await startReceiver((attempt) => (attempt.endsWith('/0/1') && flaky.has(attempt.split('/')[0] ?? '') ? 500 : 200), 5);
    receivers.push(receiver.server);
    const env = { REDIS_URL: server.url, QUEUE_PREFIX: prefix, RECEIVER_URL: receiver.url, RETRY_DELAY_MS: '50', CONCURRENCY: '8' };
    const workers = await Promise.all([startWorker({ ...env, WORKER_NAME: 'a' }), startWorker({ ...env, WORKER_NAME: 'b' })]);

    await enqueue(prefix, jobIds);
    await waitUntil(() => receiver.hits.filter((h) => h.status === 200).length === jobIds.length, 'every delivery to get its 200', 10_000);
    await sleep(200);

    const counts = tally(receiver.hits);
    expect(counts.size).toBe(jobIds.length + flaky.size);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const byWorker = (name: string): number => receiver.hits.filter((h) => h.worker === name).length;
    expect(byWorker('a')).toBeGreaterThan(0);
    expect(byWorker('b')).toBeGreaterThan(0);

    // A graceful stop: SIGTERM closes the queue and the process exits 0.
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    expect(workers.map((w) => w.child.exitCode)).toEqual([0, 0]);
  });
});
