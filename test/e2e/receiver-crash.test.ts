// A receiver instance SIGKILLed inside its handler, holding the job's claim in the shared Redis store:
// the job must still be handled, by another instance, once the lease runs out. The sender's retries
// meanwhile get 503 + Retry-After from the surviving instance ("in flight elsewhere").
//
// Times are the defaults scaled down 10×: lease 20 s → 2 s, Retry-After 30 s → 3 s, the sender's
// first backoff 1 s → 100 ms (cap 30 s as the spec's). With the default relation (lease shorter than
// Retry-After) the retry after the 503 finds the lease gone; a lease longer than the sender's whole
// retry budget (here: a sender with one retry) makes the round fail instead, visible in the
// deliveries endpoint, and a redelivery then gets the job handled.
//
// Instance A and B are child processes (test/helpers/crash-receiver.mjs) behind the test proxy: the
// first attempt goes to A, whose handler never returns; A is killed (the proxy answers that attempt
// 502); later attempts go to B. Child processes run the built packages: `npx tsc -b` first.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestKeyPair } from '@jobhook/core/testing';
import { createSender, type Sender } from '@jobhook/sender';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startRedisServer, type RedisServer } from '../../packages/core/test/helpers/redis-server.js';
import { assertBuilt, REPO_ROOT } from '../helpers/chaos-cluster.js';
import { spawnNode, stopAllChildren, type ManagedChild } from '../helpers/chaos-processes.js';
import { createSenderApi, type SenderApi } from '../helpers/e2e-sender-api.js';
import { waitUntil } from '../helpers/e2e-wait.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';

const SCRIPT = join(REPO_ROOT, 'test/helpers/crash-receiver.mjs');
const RETRY_AFTER_S = 3;
const SHORT_LEASE_MS = 2000;
/**
 * Outlives the budget of a sender with one retry (~0.1 s after the crash): the claim expires between
 * 2/3 of the lease (A renewed it every leaseMs / 3) and the whole lease after the crash.
 */
const LONG_LEASE_MS = 3000;
const WAIT_MS = 20_000;

/** One JSON line a crash receiver printed. */
interface ReceiverLine {
  msg: string;
  jobId?: string;
  status?: number;
  kind?: string;
}

interface Instance {
  child: ManagedChild;
  baseUrl: string;
  lines: ReceiverLine[];
}

const key = createTestKeyPair();
let keyDir: string;
let publicKeyPath: string;
let redis: RedisServer;
let sender: Sender;
let api: SenderApi;
/** Same, with a single retry: its budget ends long before a 3 s lease. */
let oneRetrySender: Sender;
let oneRetryApi: SenderApi;

beforeAll(async () => {
  assertBuilt();
  keyDir = await mkdtemp(join(tmpdir(), 'jobhook-crash-'));
  publicKeyPath = join(keyDir, 'sender.public.pem');
  await writeFile(publicKeyPath, key.publicKeyPem);
  redis = await startRedisServer();
  const options = {
    privateKey: key.privateKeyPem,
    allowInsecureReceivers: true,
    receiverAllowlist: ['127.0.0.0/8'],
    attemptTimeoutMs: 5000,
    retryBaseMs: 100,
    maxRetryDelayMs: 30_000,
    jobDelayMs: 10,
  } as const;
  [sender, oneRetrySender] = await Promise.all([createSender({ ...options, maxRetries: 3 }), createSender({ ...options, maxRetries: 1 })]);
  api = createSenderApi(await sender.listen({ port: 0 }), sender.devKeys!.inference);
  oneRetryApi = createSenderApi(await oneRetrySender.listen({ port: 0 }), oneRetrySender.devKeys!.inference);
});

afterAll(async () => {
  await Promise.all([sender?.close(), oneRetrySender?.close()]);
  await stopAllChildren();
  await redis?.dispose();
  if (keyDir !== undefined) await rm(keyDir, { recursive: true, force: true });
});

async function startInstance(name: string, leaseMs: number, handler: 'hang' | 'ok'): Promise<Instance> {
  const lines: ReceiverLine[] = [];
  const { child, ready } = await spawnNode({
    name,
    args: [SCRIPT],
    cwd: REPO_ROOT,
    env: {
      PORT: '0',
      JOBHOOK_PUBLIC_KEY: publicKeyPath,
      REDIS_URL: redis.url,
      LEASE_MS: String(leaseMs),
      RETRY_AFTER_S: String(RETRY_AFTER_S),
      HANDLER: handler,
    },
    ready: /"msg":"listening","port":(\d+)/,
    onLine: (line, stream) => {
      if (stream === 'stdout' && line.startsWith('{')) lines.push(JSON.parse(line) as ReceiverLine);
    },
  });
  return { child, baseUrl: `http://127.0.0.1:${ready[1]}`, lines };
}

const linesOf = (instance: Instance, msg: string, jobId: string): ReceiverLine[] =>
  instance.lines.filter((l) => l.msg === msg && l.jobId === jobId);

/**
 * Submits one job whose webhook goes through a proxy to A (handler hangs), waits until A's handler
 * started, SIGKILLs A and points the proxy at B. Returns the job id and when A died.
 */
async function crashInsideHandler(
  through: SenderApi,
  leaseMs: number,
): Promise<{ jobId: string; a: Instance; b: Instance; proxy: FaultProxy; killedAt: number }> {
  const [a, b] = await Promise.all([startInstance('receiver A (hangs)', leaseMs, 'hang'), startInstance('receiver B', leaseMs, 'ok')]);
  const proxy = await startFaultProxy({ targets: [a.baseUrl] });
  const jobId = await through.submit(
    JSON.stringify({
      model: 'ocr/ocr_async/simulated',
      input: { file: 'https://files.example/crash.pdf' },
      webhook_receiver: `${proxy.url}/webhooks/jobs`,
    }),
  );
  await waitUntil(() => (linesOf(a, 'handler started', jobId).length > 0 ? true : undefined), {
    timeoutMs: WAIT_MS,
    what: () => `A's handler to start for ${jobId}`,
  });
  proxy.setTargets([b.baseUrl]);
  await a.child.kill();
  return { jobId, a, b, proxy, killedAt: Date.now() };
}

describe('a receiver killed inside its handler (claim held in Redis)', () => {
  test('lease shorter than Retry-After: the retry after the 503 finds it free; B handles the job once; delivered', async () => {
    const { jobId, b, proxy, killedAt } = await crashInsideHandler(api, SHORT_LEASE_MS);
    try {
      const d = await api.waitForFinalDelivery(jobId, WAIT_MS);
      expect(d.delivery).toBe('delivered');
      const statuses = d.attempts.map((x) => x.status_code);
      // 502: the proxy's answer for the attempt A died in; 503: B saw the claim A still held.
      expect(statuses[0]).toBe(502);
      expect(statuses.at(-1)).toBe(200);
      expect(statuses.slice(1, -1).every((s) => s === 503)).toBe(true);
      expect(statuses).toContain(503);
      expect(linesOf(b, 'answered', jobId).map((l) => l.kind)).toEqual([...statuses.slice(1, -1).map(() => 'in-flight'), 'handled']);
      expect(linesOf(b, 'handler started', jobId)).toHaveLength(1);
      expect(linesOf(b, 'job handled', jobId)).toHaveLength(1);
      // Not taken before the lease could have run out (A renewed it every leaseMs / 3 until it died).
      const handledAfterMs = Date.parse(d.attempts.at(-1)!.started_at) - killedAt;
      expect(handledAfterMs).toBeGreaterThanOrEqual((SHORT_LEASE_MS * 2) / 3 - 50);
    } finally {
      await Promise.all([proxy.close(), b.child.stop()]);
    }
  });

  test('lease longer than the retry budget: the round fails (listed), and a redelivery after the lease is handled once by B', async () => {
    const { jobId, b, proxy, killedAt } = await crashInsideHandler(oneRetryApi, LONG_LEASE_MS);
    try {
      const failed = await oneRetryApi.waitForFinalDelivery(jobId, WAIT_MS);
      expect(failed.delivery).toBe('failed');
      expect(failed.attempts.map((x) => x.status_code)).toEqual([502, 503]);
      expect(linesOf(b, 'handler started', jobId)).toHaveLength(0);

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + LONG_LEASE_MS - Date.now())));
      expect(await oneRetryApi.redeliver(jobId)).toBe(1);
      const redelivered = await oneRetryApi.waitForFinalDelivery(jobId, WAIT_MS);
      expect(redelivered.delivery).toBe('delivered');
      expect(redelivered.attempts.filter((x) => x.round === 1).map((x) => x.status_code)).toEqual([200]);
      expect(linesOf(b, 'job handled', jobId)).toHaveLength(1);
    } finally {
      await Promise.all([proxy.close(), b.child.stop()]);
    }
  });
});
