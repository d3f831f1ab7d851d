// The whole loop, as a user runs it: the reference sender (in this process) signs and POSTs webhooks
// over real HTTP to each example receiver app (a child process: `node examples/<fw>-receiver/server.mjs`),
// which verifies them and logs one "job handled" line per job. We count those lines and read the
// sender's deliveries endpoint, through a 500, a receiver slower than the attempt timeout, and a
// receiver that is down and comes back. Child processes run the built packages: `npx tsc -b` first.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createTestKeyPair } from '@jobhook/core/testing';
import { createSender, type Sender } from '@jobhook/sender';
import { EXAMPLE_FRAMEWORKS, startExampleReceiver, type ExampleReceiver } from '../helpers/e2e-example-receiver.js';
import { createSenderApi, type DeliveriesView, type SenderApi } from '../helpers/e2e-sender-api.js';
import { waitUntil } from '../helpers/e2e-wait.js';
import { startFaultProxy, type Fault, type FaultProxy } from '../helpers/fault-proxy.js';

/** Long enough that a loaded machine answers a healthy receiver in time, short enough to test a hang. */
const ATTEMPT_TIMEOUT_MS = 1000;
/**
 * Sender of the down-then-up scenario: 5 retries from 500 ms, doubled, equal jitter (each delay at least
 * half its nominal step), capped at 4 s. The last attempt comes at least 250+500+1000+2000+2000 = 5750 ms
 * after the first, so a receiver that restarts within ~5 s of the first refused connection is still
 * reached (node starts an example app in 0.3–1 s; more on a loaded machine).
 */
const DOWN_RETRY = { retryBaseMs: 500, maxRetries: 5, maxRetryDelayMs: 4000 } as const;
/** Generous: waits end as soon as their condition holds. */
const WAIT_MS = 20_000;
const JOBS_PER_ADAPTER = 20;
/** 2**70: past 2**53, so a receiver that reads numbers as doubles cannot reproduce the signed bytes. */
const BIG = (2n ** 70n).toString();
const MODEL = 'ocr/ocr_async/simulated';

/**
 * A submission as JSON text: numbers written as a client in another language would send them.
 * The webhook's signature covers the canonical form (sorted keys, 2-space indent, Python number
 * and string rules), so a receiver verifies only if it reproduces `1.0`, 2**70, unicode strings,
 * and the code-point order of keys (`ｚ` U+FF5A before `😀` U+1F600, the opposite of UTF-16 order) exactly.
 */
function submissionText(receiverUrl: string, outcome: 'success' | 'fail', seq: number): string {
  const simulate = outcome === 'fail' ? '{"outcome":"fail","error_code":"provider_timeout"}' : '{"outcome":"success"}';
  const params = `{"customer":"Zoë Ångström — 東京 🚀","ratio":1.0,"big":${BIG},"ｚ":1,"😀":"grin","seq":${seq}}`;
  return (
    `{"model":"${MODEL}","input":{"file":"https://files.example/doc-${seq}.pdf","simulate":${simulate}},` +
    `"webhook_receiver":${JSON.stringify(receiverUrl)},"user_webhook_parameters":${params}}`
  );
}

/** Webhook URL whose first request the proxy answers with `fault`; later requests of the same URL go through. */
function faultOnceUrl(proxy: FaultProxy, fault: Fault, tag: string): string {
  return `${proxy.url}/webhooks/jobs?first=${fault}&tag=${tag}`;
}

/** Proxy plan of {@link faultOnceUrl}: keyed on the URL's tag, one tag per job. */
function faultOncePlan(): (n: number, req: { url?: string | undefined }) => Fault {
  const seen = new Set<string>();
  return (_n, req) => {
    const query = new URL(req.url ?? '/', 'http://proxy.invalid').searchParams;
    const first = query.get('first');
    const tag = query.get('tag');
    if (tag === null || seen.has(tag) || (first !== 'error500' && first !== 'hang' && first !== 'reset')) return 'forward';
    seen.add(tag);
    return first;
  };
}

function describeAttempts(d: DeliveriesView): string {
  return JSON.stringify(d.attempts.map((a) => ({ attempt: a.attempt, status: a.status_code, error: a.error, outcome: a.outcome })));
}

const key = createTestKeyPair();
let keyDir: string;
let publicKeyPath: string;

beforeAll(async () => {
  keyDir = await mkdtemp(join(tmpdir(), 'jobhook-e2e-'));
  publicKeyPath = join(keyDir, 'sender.public.pem');
  // Every sender of this file signs with `key`; the file holds what `sender.publicKeyPem` says.
  const probe = await createSender({ privateKey: key.privateKeyPem });
  await writeFile(publicKeyPath, probe.publicKeyPem);
  await probe.close();
});

afterAll(async () => {
  if (keyDir !== undefined) await rm(keyDir, { recursive: true, force: true });
});

describe.concurrent.each(EXAMPLE_FRAMEWORKS)('sender → %s example receiver', (framework) => {
  let receiver: ExampleReceiver;
  let proxy: FaultProxy;
  let sender: Sender;
  let api: SenderApi;
  let slowRetrySender: Sender;
  let slowRetryApi: SenderApi;
  /** Jobs sent to `receiver` (directly or through `proxy`). */
  const submitted = new Set<string>();
  const restarted: ExampleReceiver[] = [];
  let startedAt = 0;

  const senderOptions = {
    privateKey: key.privateKeyPem,
    allowInsecureReceivers: true,
    receiverAllowlist: ['127.0.0.0/8'],
    attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    jobDelayMs: 10,
  } as const;

  beforeAll(async () => {
    startedAt = Date.now();
    [receiver, sender, slowRetrySender] = await Promise.all([
      startExampleReceiver({ framework, publicKeyPath }),
      createSender({ ...senderOptions, retryBaseMs: 50 }),
      createSender({ ...senderOptions, ...DOWN_RETRY }),
    ]);
    proxy = await startFaultProxy({ targets: [receiver.baseUrl], plan: faultOncePlan() });
    api = createSenderApi(await sender.listen({ port: 0 }), sender.devKeys!.inference);
    slowRetryApi = createSenderApi(await slowRetrySender.listen({ port: 0 }), slowRetrySender.devKeys!.inference);
  });

  afterAll(async () => {
    await Promise.all([sender?.close(), slowRetrySender?.close(), proxy?.close(), receiver?.stop(), ...restarted.map((r) => r.stop())]);
    // E2E_TIMINGS=1 prints how long each adapter took, start of its receiver to end of cleanup.
    if (process.env['E2E_TIMINGS'] === '1') console.log(`[e2e] ${framework}: ${Date.now() - startedAt} ms`);
  });

  /**
   * Submits one job per outcome (seq from `seqBase`) whose first delivery the proxy answers with
   * `fault`; waits until each delivery is final and each job handled. Returns ids and deliveries.
   */
  async function deliverFaultedOnce(
    fault: Fault,
    outcomes: readonly ('success' | 'fail')[],
    seqBase: number,
  ): Promise<{ ids: string[]; finals: DeliveriesView[] }> {
    const ids = await Promise.all(
      outcomes.map(async (outcome, i) => {
        const jobId = await api.submit(submissionText(faultOnceUrl(proxy, fault, `${framework}-${fault}-${i}`), outcome, seqBase + i));
        submitted.add(jobId);
        return jobId;
      }),
    );
    const finals = await Promise.all(ids.map((id) => api.waitForFinalDelivery(id, WAIT_MS)));
    await receiver.waitForHandled(ids, WAIT_MS);
    return { ids, finals };
  }

  describe('scenarios', () => {
    test(`${JOBS_PER_ADAPTER} jobs (success and fail, unicode, 1.0, 2**70): each verified and handled once, delivered in one attempt; a redelivery is not handled again`, async ({
      expect,
    }) => {
      const plans = Array.from({ length: JOBS_PER_ADAPTER }, (_, seq) => ({
        seq,
        outcome: seq % 3 === 0 ? ('fail' as const) : ('success' as const),
      }));
      const jobs = await Promise.all(
        plans.map(async (p) => {
          const jobId = await api.submit(submissionText(receiver.webhookUrl, p.outcome, p.seq));
          submitted.add(jobId);
          return { ...p, jobId };
        }),
      );
      const ids = jobs.map((j) => j.jobId);
      expect(new Set(ids).size).toBe(JOBS_PER_ADAPTER);

      // Delivery states first: a delivery that failed or was rejected ends the wait at once.
      const finals = await Promise.all(ids.map((id) => api.waitForFinalDelivery(id, WAIT_MS)));
      for (const d of finals) expect(d.delivery, `job ${d.job_id}: ${describeAttempts(d)}`).toBe('delivered');
      await receiver.waitForHandled(ids, WAIT_MS);

      // Handled exactly once each (a rejected signature would have meant no line at all), with the right status.
      const mine = receiver.handled.filter((h) => ids.includes(h.jobId));
      expect(mine.map((h) => h.jobId).sort()).toEqual([...ids].sort());
      for (const job of jobs) {
        expect(receiver.handledCount(job.jobId), `times ${job.jobId} was handled`).toBe(1);
        expect(mine.find((h) => h.jobId === job.jobId)?.status).toBe(job.outcome);
      }
      for (const [i, d] of finals.entries()) {
        expect(d.delivery, describeAttempts(d)).toBe('delivered');
        expect(d.attempts, describeAttempts(d)).toHaveLength(1);
        expect(d.attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null, outcome: 'delivered', url: receiver.webhookUrl });
        expect(d.job_id).toBe(ids[i]);
      }

      // Polling shows the final status, and the parameters exactly as submitted.
      for (const job of jobs) {
        const text = await api.pollText(job.jobId);
        const view = JSON.parse(text) as {
          status: string;
          user_parameters: { customer: string; seq: number };
          error?: { error_code?: string };
        };
        expect(view.status).toBe(job.outcome);
        expect(text).toContain('"ratio":1.0');
        expect(text).toContain(`"big":${BIG}`);
        expect(view.user_parameters).toMatchObject({ customer: 'Zoë Ångström — 東京 🚀', seq: job.seq });
        if (job.outcome === 'fail') expect(view.error?.error_code).toBe('provider_timeout');
      }

      // The same job_id delivered again (spec §6.4) is acknowledged without running the handler again.
      const again = jobs[1]!.jobId;
      expect(await api.redeliver(again)).toBe(1);
      const redelivered = await waitUntil(
        async () => {
          const d = await api.deliveries(again);
          return d.round === 1 && d.delivery !== 'pending' ? d : undefined;
        },
        { timeoutMs: WAIT_MS, what: () => `round 1 of job ${again} to finish` },
      );
      expect(redelivered.delivery, describeAttempts(redelivered)).toBe('delivered');
      expect(
        redelivered.attempts.map((a) => [a.round, a.status_code]),
        describeAttempts(redelivered),
      ).toEqual([
        [0, 200],
        [1, 200],
      ]);
      expect(receiver.handledCount(again)).toBe(1);
    });

    test('the receiver answers 500 first: retried, handled once, attempts [500, 200]', async ({ expect }) => {
      const { ids, finals } = await deliverFaultedOnce(
        'error500',
        [0, 1, 2].map(() => 'success'),
        100,
      );
      for (const [i, id] of ids.entries()) {
        const d = finals[i]!;
        expect(d.delivery, describeAttempts(d)).toBe('delivered');
        expect(
          d.attempts.map((a) => a.status_code),
          describeAttempts(d),
        ).toEqual([500, 200]);
        expect(d.attempts.map((a) => a.outcome)).toEqual(['retry', 'delivered']);
        expect(receiver.handledCount(id), `times ${id} was handled`).toBe(1);
      }
    });

    test('the receiver is slower than the attempt timeout: attempt 1 times out, attempt 2 delivers, handled once', async ({ expect }) => {
      const { ids, finals } = await deliverFaultedOnce('hang', ['success', 'fail'], 200);
      for (const [i, id] of ids.entries()) {
        const d = finals[i]!;
        expect(d.delivery, describeAttempts(d)).toBe('delivered');
        expect(d.attempts, describeAttempts(d)).toHaveLength(2);
        expect(d.attempts[0]).toMatchObject({ attempt: 1, status_code: null, error: 'timeout', outcome: 'retry' });
        // The deadline covers signing and connecting too, so the attempt lasted (about) the whole timeout.
        expect(d.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS * 0.9);
        expect(d.attempts[1]).toMatchObject({ attempt: 2, status_code: 200, error: null, outcome: 'delivered' });
        expect(receiver.handledCount(id), `times ${id} was handled`).toBe(1);
      }
    });

    test('the receiver is down, then up within the retry budget: refused attempts, then delivered and handled once', async ({ expect }) => {
      // A receiver that ran and was stopped: its port is known and nothing listens on it.
      const first = await startExampleReceiver({ framework, publicKeyPath });
      restarted.push(first);
      expect(await first.stop()).toBe(0);

      const jobId = await slowRetryApi.submit(submissionText(first.webhookUrl, 'success', 300));
      let seen: DeliveriesView | undefined;
      await waitUntil(
        async () => {
          seen = await slowRetryApi.deliveries(jobId);
          return seen.attempts.some((a) => a.error === 'ECONNREFUSED') ? true : undefined;
        },
        { timeoutMs: WAIT_MS, what: () => `a refused attempt of job ${jobId}; last seen ${JSON.stringify(seen)}` },
      );
      expect(seen!.delivery, 'still within the retry budget').toBe('pending');

      const again = await startExampleReceiver({ framework, publicKeyPath, port: first.port });
      restarted.push(again);
      const d = await slowRetryApi.waitForFinalDelivery(jobId, WAIT_MS);
      expect(d.delivery, describeAttempts(d)).toBe('delivered');
      await again.waitForHandled([jobId], WAIT_MS);
      expect(d.attempts.length, describeAttempts(d)).toBeGreaterThanOrEqual(2);
      const refused = d.attempts.slice(0, -1);
      for (const a of refused) expect(a, describeAttempts(d)).toMatchObject({ status_code: null, error: 'ECONNREFUSED', outcome: 'retry' });
      expect(d.attempts.at(-1)).toMatchObject({
        attempt: d.attempts.length,
        status_code: 200,
        outcome: 'delivered',
        url: first.webhookUrl,
      });
      expect(first.handled).toEqual([]);
      expect(again.handled).toEqual([{ jobId, status: 'success' }]);
    });
  });

  // Runs after every scenario above: stops the receiver so its whole log is read, then checks it.
  test.sequential('across all scenarios nothing was handled twice, nothing unknown was handled, and SIGTERM exits 0', async ({
    expect,
  }) => {
    expect(await receiver.stop()).toBe(0);
    const ids = receiver.handled.map((h) => h.jobId);
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(twice, 'job ids handled more than once').toEqual([]);
    expect([...ids].sort()).toEqual([...submitted].sort());
    expect(submitted.size).toBe(JOBS_PER_ADAPTER + 3 + 2);
  });
});
