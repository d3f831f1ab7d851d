// Group `poll-answer`: what one huge poll answer costs the process that runs the reconciler, while
// that process keeps answering webhooks. The reconciler's process (a child, so its peak RSS is its
// own) serves a receiver over HTTP and runs one reconciler round for one due job; this process plays
// the service's poll endpoint (the answer streamed in 1 MiB chunks, never held whole) and sends
// signed webhooks to that receiver, two at a time, the whole while.
// Shapes: `{"job_id":…,"status":"success","output":{"a":[{},{},…]}}` (the cheapest bytes for the
// most objects: JSON.parse makes one object per 3 bytes), at 60 MB and just under the client's
// default `maxAnswerBytes` (4 MiB), the largest answer a default reconciler still hands on.
// Reported per shape: the round's time and outcome, the child's peak RSS over its RSS before the
// round (both after a GC), its event loop's longest stall, and the webhooks answered during the round.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { num, table, logResult } from './report.mjs';

export const description =
  'one 60 MB (and one 4 MiB) poll answer through a reconciler round, webhooks sent to a receiver in the same process meanwhile: RSS, stall, webhooks answered';

const MiB = 2 ** 20;
/** Goal of the 60 MB row: the child's peak RSS over its RSS before the round. */
export const BUDGET_RSS_MB = 300;
/** The shapes: name → answer size in bytes. */
const SHAPES = [
  ['60 MB {"a":[{},{},…]}', 60_000_000],
  ['4 MiB − 1 KiB {"a":[{},{},…]}', 4 * MiB - 1024],
];
/** Distinct signed webhooks, sent in turn (later rounds are duplicates: verified, then answered 200). */
const WEBHOOKS = 200;

const here = fileURLToPath(import.meta.url);

/** The reconciler's process: a receiver on HTTP, a ledger with one due job, one round on demand. */
async function child() {
  const { createReceiver } = await import('@jobhook/core');
  const { receiveNodeRequest } = await import('@jobhook/core/adapter');
  const { createMemoryLedger } = await import('@jobhook/core/ledger');
  const { createClient, createReconciler } = await import('@jobhook/client');
  const setup = await new Promise((resolve) => process.once('message', resolve));
  const lines = [];
  const keep = (level) => (fields, msg) => void lines.push({ level, msg, code: fields?.code, reason: fields?.reason });
  const logger = { debug() {}, info() {}, warn: keep('warn'), error: keep('error') };
  const ledger = createMemoryLedger();
  let handledByPoll = 0;
  const receiver = createReceiver({
    publicKeys: setup.publicKeyPem,
    ledger,
    logger,
    onEvent: (_event, ctx) => {
      if (ctx.source === 'poll') handledByPoll++;
    },
  });
  const server = createServer((req, res) => {
    receiveNodeRequest(
      receiver,
      req,
      { method: req.method ?? '', headers: req.headers, clientAddress: req.socket.remoteAddress },
      () => undefined,
    ).then((answer) => res.writeHead(answer.status, answer.headers).end(answer.body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await ledger.begin('bench', { dueAt: Date.now() - 1 });
  await ledger.attach('bench', setup.jobId);
  const client = createClient({ baseUrl: setup.pollUrl, apiKey: 'bench-key', timeoutMs: 600_000 });
  const reconciler = createReconciler({ client, ledger, receiver, logger });
  globalThis.gc?.();
  const rss0 = process.memoryUsage.rss();
  process.send({ port: server.address().port });
  await new Promise((resolve) => process.once('message', resolve));
  // The longest time between two ticks of a 10 ms timer: how long the event loop was held.
  let stallMs = 0;
  let tick = performance.now();
  const ticker = setInterval(() => {
    const t = performance.now();
    stallMs = Math.max(stallMs, t - tick - 10);
    tick = t;
  }, 10);
  const t0 = performance.now();
  let summary;
  let error;
  try {
    summary = await reconciler.runOnce();
  } catch (err) {
    error = String(err);
  }
  const roundMs = performance.now() - t0;
  // One more tick, so a hold that ended the round is counted.
  await new Promise((resolve) => setTimeout(resolve, 30));
  clearInterval(ticker);
  const peakRss = process.resourceUsage().maxRSS * 1024;
  process.send({
    roundMs,
    outcomes: summary?.outcomes,
    error,
    handledByPoll,
    rssDeltaMb: (peakRss - rss0) / 1e6,
    stallMs,
    lines: lines.slice(0, 5),
  });
  await new Promise((resolve) => process.once('message', resolve));
  server.closeAllConnections();
  server.close();
  await reconciler.stop();
}

/** The service's poll endpoint: one finished job whose answer has `size` bytes, streamed. */
async function startPollServer(jobId, size) {
  const head = Buffer.from(`{"job_id":"${jobId}","status":"success","output":{"a":[`);
  const tail = Buffer.from('{}]}}');
  const chunk = Buffer.from('{},'.repeat(Math.floor(MiB / 3)));
  const server = createServer(async (req, res) => {
    req.resume();
    // No Content-Length: the client learns the size only by reading (a limit must cut the stream).
    res.writeHead(200, { 'content-type': 'application/json' });
    let closed = false;
    let drained = () => {};
    res.on('drain', () => drained());
    res.on('close', () => {
      closed = true;
      drained();
    });
    const write = (bytes) => (res.write(bytes) || closed ? undefined : new Promise((resolve) => (drained = resolve)));
    await write(head);
    let left = size - head.length - tail.length;
    while (left >= chunk.length && !closed) {
      await write(chunk);
      left -= chunk.length;
    }
    // The rest: whole `{},` units, then spaces (JSON whitespace) to the exact size.
    if (!closed) await write(Buffer.concat([chunk.subarray(0, left - (left % 3)), Buffer.alloc(left % 3, 32)]));
    if (!closed) res.end(tail);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Sends the webhooks two at a time until stopped; records when each answer came and its status. */
function sendWebhooks(url, requests) {
  const answers = [];
  let stopped = false;
  let next = 0;
  const loop = async () => {
    while (!stopped) {
      const request = requests[next++ % requests.length];
      try {
        const res = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
        await res.arrayBuffer();
        answers.push({ at: performance.now(), status: res.status });
      } catch {
        answers.push({ at: performance.now(), status: 0 });
      }
    }
  };
  const loops = [loop(), loop()];
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

async function runShape(name, size, keys, requests, log) {
  const jobId = randomUUID();
  const pollServer = await startPollServer(jobId, size);
  const worker = fork(here, ['--child'], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const message = () => new Promise((resolve) => worker.once('message', resolve));
  worker.send({ publicKeyPem: keys.publicKeyPem, pollUrl: `http://127.0.0.1:${pollServer.address().port}`, jobId });
  const { port } = await message();
  const webhooks = sendWebhooks(`http://127.0.0.1:${port}/hooks`, requests);
  // Webhooks flowing before the round starts.
  await new Promise((resolve) => setTimeout(resolve, 500));
  log(`  ${name}: round started`);
  const t0 = performance.now();
  worker.send('round');
  const result = await message();
  const t1 = performance.now();
  await webhooks.stop();
  worker.send('exit');
  await new Promise((resolve) => worker.once('exit', resolve));
  pollServer.closeAllConnections();
  pollServer.close();
  const during = webhooks.answers.filter((a) => a.at >= t0 && a.at <= t1);
  let gap = 0;
  let last = t0;
  for (const a of during) {
    gap = Math.max(gap, a.at - last);
    last = a.at;
  }
  gap = Math.max(gap, t1 - last);
  return {
    name,
    ...result,
    answered: during.filter((a) => a.status === 200).length,
    otherStatus: during.filter((a) => a.status !== 200).length,
    longestGapMs: gap,
  };
}

export async function run({ log }) {
  const { buildSignedRequest, createTestKeyPair } = await import('@jobhook/core/testing');
  const keys = createTestKeyPair();
  const requests = Array.from({ length: WEBHOOKS }, () => {
    const r = buildSignedRequest({ job_id: randomUUID(), status: 'success' }, { privateKey: keys.privateKey });
    return { headers: { ...r.headers, 'content-type': 'application/json' }, body: r.body };
  });
  const rows = [];
  for (const [name, size] of SHAPES) rows.push(await runShape(name, size, keys, requests, log));

  const text = table(
    [
      { header: 'poll answer', align: 'left' },
      { header: 'round', align: 'right' },
      { header: 'round outcome', align: 'left' },
      { header: 'RSS peak − before', align: 'right' },
      { header: 'longest stall', align: 'right' },
      { header: 'webhooks answered 200 during the round', align: 'right' },
      { header: 'longest gap between answers', align: 'right' },
    ],
    rows.map((r) => [
      r.name,
      `${num(r.roundMs)} ms`,
      r.error ??
        `${Object.entries(r.outcomes ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}${r.handledByPoll > 0 ? ' (handler ran)' : ''}`,
      `${num(r.rssDeltaMb)} MB`,
      `${num(r.stallMs)} ms`,
      `${num(r.answered)}${r.otherStatus > 0 ? ` (+${r.otherStatus} not 200)` : ''}`,
      `${num(r.longestGapMs)} ms`,
    ]),
  );
  const big = rows[0];
  // Printed as budget ÷ measured, as the attack group does (≥ 1.00× = within budget).
  const targets = [
    {
      name: `poll-answer 60 MB, ${BUDGET_RSS_MB} MB ÷ RSS peak − before (${num(big.rssDeltaMb)} MB)`,
      value: BUDGET_RSS_MB / Math.max(1, big.rssDeltaMb),
      min: 1,
      met: big.rssDeltaMb <= BUDGET_RSS_MB,
    },
  ];
  const notes = [
    'RSS: the reconciler process’s peak (getrusage maxrss) minus its RSS after a GC just before the round.',
    'Stall: the longest delay of a 10 ms timer in the reconciler process during the round (its event loop held).',
    'Webhooks: signed 1 KB deliveries, two in flight at any time, from another process; 200 = handled or duplicate.',
    ...rows.flatMap((r) => r.lines.map((l) => `${r.name}: ${l.level} ${l.msg}${l.code ? ` (${l.code})` : ''}`)),
  ];
  logResult(log, text, notes);
  return { text, notes, data: rows, targets };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--child')) {
  await child();
}
