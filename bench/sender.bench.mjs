// Group `sender`: how fast the reference sender delivers signed webhooks, and what queued deliveries
// cost in memory.
//
// 1. Signed deliveries per second: deliverer.attempt() (load the job, SSRF check, build the payload,
//    canonicalize, sha256, RSA sign, POST over a real socket, record the attempt) to a receiver in
//    ANOTHER process (so its CPU is not ours) that answers 200 at once, 16 in flight; against a bare
//    RSA PKCS#1 v1.5 sign of a 64-byte digest with the same key, measured interleaved in the same run.
//    Delivery is bound by signing, so the target is deliveries/s ≥ 0.8 × signs/s.
// 2. Memory: heap growth with 100,000 deliveries queued in the memory queue (due in an hour), with
//    and without their 100,000 job records in the memory job store.
import { spawn } from 'node:child_process';
import { constants, createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { once } from 'node:events';
import { createDeliverer, createMemoryWorkQueue, createRetryPolicy, createSsrfGuard } from '../packages/delivery/dist/index.js';
import { createMemoryJobStore } from '../packages/sender/dist/jobs/memory-job-store.js';
import { buildWebhookPayload } from '../packages/sender/dist/jobs/webhook-payload.js';
import { compareAsync } from './harness.mjs';
import { num, ops, ratio, table, verdict, withRme, logResult } from './report.mjs';

export const description = 'signed deliveries/s to a local receiver vs bare RSA sign (RSA-3072); memory of 100,000 queued deliveries';
export const TARGET = 0.8;
const IN_FLIGHT = 16;
const POOL = 4_000;
const QUEUED = 100_000;

export const NOTES = [
  `deliver = deliverer.attempt({ jobId, round, attempt: 1 }) with ${IN_FLIGHT} in flight: job from the memory job store, SSRF check, payload, canonical JSON, sha256, RSA sign, POST (new TCP connection per delivery), answer read, attempt recorded.`,
  'sign    = crypto.sign(sha256, 64-byte hex digest, same key, PKCS#1 v1.5), one at a time: the work a delivery cannot avoid.',
  'The receiver is a bare node:http server in a child process answering 200 with an empty body; node and the receiver share the 2 cores.',
  `Payload: a ~1 KB success event (OCR-ish output, unicode, user_parameters with 1.0 and a 2^70 integer). Jobs cycle through a pool of ${POOL.toLocaleString('en')}.`,
];

/** Starts a receiver in a child process; resolves with its URL and a stop function. */
async function startReceiver() {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.end()); })
        .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [chunk] = await once(child.stdout, 'data');
  const port = Number(String(chunk).trim());
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

function finishedJob(url, i) {
  const now = new Date().toISOString().replace('Z', '+00:00');
  return {
    jobId: randomUUID(),
    organizationId: 'org-bench',
    keyId: null,
    feature: 'ocr',
    subfeature: 'ocr_async',
    provider: 'simulated',
    model: null,
    status: 'success',
    createdAt: now,
    finishedAt: now,
    inputJson: '{"file":"https://example.com/invoice.pdf"}',
    webhookReceiver: url,
    userParametersJson: `{"order":"A-${i}","note":"commande n°4821 — café crème ☕","weight":1.0,"big":1180591620717411303424}`,
    showOriginalResponse: false,
    simulate: {},
    outputJson: JSON.stringify({
      raw_text: 'Facture n° 2026-11-22 — Café Crème, 2 × 3,50 € — 東京 📄 '.repeat(5),
      pages: [{ page: 1, text: 'Facture n° 2026-11-22' }],
    }),
    error: null,
    originalResponseJson: null,
    cost: '0.01',
    delivery: 'pending',
    deliveryRound: 0,
  };
}

/** Heap bytes used after a full GC (needs --expose-gc to mean anything). */
function heapUsed() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

async function measureQueueMemory() {
  const base = heapUsed();
  const queue = createMemoryWorkQueue();
  await queue.start({
    runJob: async () => {},
    deliver: async () => {
      throw new Error('not due in this benchmark');
    },
  });
  for (let i = 0; i < QUEUED; i++) await queue.enqueueDelivery({ jobId: randomUUID(), round: 0, attempt: 1 }, 3_600_000);
  const queueOnly = heapUsed() - base;
  const counts = await queue.counts();
  if (counts.deliveries !== QUEUED) throw new Error(`sender bench: ${counts.deliveries} queued, expected ${QUEUED}`);
  const jobs = createMemoryJobStore();
  for (let i = 0; i < QUEUED; i++) await jobs.create(finishedJob('https://receiver.example.com/webhook', i));
  const withJobs = heapUsed() - base;
  await queue.close();
  await jobs.close();
  return { queueOnly, withJobs };
}

export async function run({ settings, log }) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
  const receiver = await startReceiver();
  const rows = {};
  try {
    let jobs = createMemoryJobStore();
    const ids = [];
    const fillPool = async () => {
      jobs = createMemoryJobStore();
      ids.length = 0;
      for (let i = 0; i < POOL; i++) {
        const job = finishedJob(receiver.url, i);
        await jobs.create(job);
        ids.push(job.jobId);
      }
    };
    await fillPool();
    let deliverer;
    const makeDeliverer = () => {
      deliverer = createDeliverer({
        jobs,
        payload: buildWebhookPayload,
        privateKey,
        policy: createRetryPolicy(),
        guard: createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] }),
      });
    };
    makeDeliverer();
    let next = 0;
    const deliver = async () => {
      if (next === POOL) {
        next = 0;
        await fillPool(); // fresh records and attempt logs, so the pool never grows
        makeDeliverer();
      }
      const record = await deliverer.attempt({ jobId: ids[next++], round: 0, attempt: 1 });
      if (record.outcome !== 'delivered')
        throw new Error(`sender bench: delivery ${record.outcome} (${record.error ?? record.statusCode})`);
    };
    const digest = Buffer.from(createHash('sha256').update('bench').digest('hex'), 'latin1');
    const bareSign = async () => sign('sha256', digest, { key: privateKey, padding: constants.RSA_PKCS1_PADDING });

    log(`  deliveries (${IN_FLIGHT} in flight) vs bare RSA-3072 sign…`);
    const [delivered, signed] = await compareAsync(
      [
        { name: 'deliver', fn: deliver, concurrency: IN_FLIGHT },
        { name: 'sign', fn: bareSign, concurrency: 1 },
      ],
      { ...settings, batchMs: 100 },
    );
    rows.delivered = delivered;
    rows.signed = signed;
  } finally {
    await receiver.stop();
  }

  log(`  memory with ${QUEUED.toLocaleString('en')} queued deliveries…`);
  const memory = await measureQueueMemory();
  const value = rows.delivered.opsPerSec / rows.signed.opsPerSec;
  const text = table(
    [{ header: 'measure', align: 'left' }, { header: 'value' }, { header: 'vs bare sign' }, { header: 'target' }],
    [
      [
        'signed deliveries/s',
        withRme(ops(rows.delivered.opsPerSec), rows.delivered.rme),
        ratio(value),
        `≥ ${TARGET}× ${verdict(value, TARGET)}`,
      ],
      ['bare RSA-3072 signs/s', withRme(ops(rows.signed.opsPerSec), rows.signed.rme), '1.00×', ''],
      [
        `heap, ${QUEUED.toLocaleString('en')} queued deliveries`,
        `${num(memory.queueOnly / 1048576, 1)} MiB (${num(memory.queueOnly / QUEUED)} B each)`,
        '',
        '',
      ],
      [
        `heap, + their ${QUEUED.toLocaleString('en')} job records`,
        `${num(memory.withJobs / 1048576, 1)} MiB (${num(memory.withJobs / QUEUED)} B each)`,
        '',
        '',
      ],
    ],
  );
  logResult(log, text, NOTES);
  return {
    text,
    notes: NOTES,
    data: { inFlight: IN_FLIGHT, delivered: rows.delivered, signed: rows.signed, memory },
    targets: [{ name: 'signed deliveries/s vs bare RSA sign', value, min: TARGET, met: value >= TARGET }],
  };
}
