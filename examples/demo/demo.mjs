// The jobhook demo (`npm run demo`): the whole loop on this machine. The reference service
// (@jobhook/sender) runs jobs submitted with @jobhook/client and delivers their signed webhooks to the
// Fastify example receiver (examples/fastify-receiver, run as a child process). It shows each webhook
// verified and handled once, a duplicate acknowledged, a tampered body refused and diagnosed (why its
// signature fails), another customer's job aimed at the receiver refused (recipient binding), a job
// fetched by polling, a delivery log with a retry, why a naive verifier fails, and the public
// signature vectors.
// Exit 0 when every check holds, 1 otherwise; nothing is left running either way. With --keep-open
// the service (and its web page) and the receiver stay up after the checks until Ctrl-C.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '@jobhook/client';
import { parseBody, rawJson, stringifyJson, toLosslessValue } from '@jobhook/core/json';
import { diagnoseDelivery } from '@jobhook/core/diagnosis';
import { RECIPIENT_TAG_KEY } from '@jobhook/core/recipient';
import { createSender } from '@jobhook/sender';
import { compareNaiveAndExact } from './lib/naive-vs-exact.mjs';
import { startReceiverChild } from './lib/receiver-child.mjs';
import { createReport, short } from './lib/report.mjs';
import { checkVectors } from './lib/vectors-check.mjs';
import { OUTAGE_ONCE_PATH, startWireTap } from './lib/wire-tap.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
/** The repository's signature vectors (vectors/ at the repository root). */
const vectorsDir = resolve(repoRoot, 'vectors');
/** Short demo timings; the service's own are 1 s before the first retry and 30 s per attempt. */
const RETRY_BASE_MS = 200;
const ATTEMPT_TIMEOUT_MS = 5_000;
/** Last resort if a step hangs despite its own timeout. */
const WATCHDOG_MS = 50_000;

const report = createReport();
const started = performance.now();
/** What cleanup() must stop, filled in as things start. */
const running = { sender: undefined, receiver: undefined, tap: undefined, tmpDir: undefined, apiKey: undefined };
/** Two customers of the service: you (your receiver, your jobs) and another organization. */
const TOKEN_YOU = `jh_inf_${randomBytes(24).toString('base64url')}`;
const TOKEN_OTHER = `jh_inf_${randomBytes(24).toString('base64url')}`;
/** Your receiver's recipient secret: your client tags each job with it; the receiver checks the tag. */
const RECIPIENT_SECRET = randomBytes(32).toString('base64');
/** cleanup()'s one run. */
let cleaning;
/** `--keep-open`: after the checks, wait for Ctrl-C (or SIGTERM) with everything up; set to the wait's resolver then. */
const keepOpen = { asked: process.argv.slice(2).includes('--keep-open'), release: undefined };

// A receiver child must not outlive the demo, however the demo ends.
process.on('exit', () => running.receiver?.killNow());
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.once(signal, () => {
    // Kept open: the signal is the expected end; shut down as after any run (exit 0 when the checks held).
    if (keepOpen.release !== undefined) return keepOpen.release();
    console.log(`\n${signal}: stopping the receiver and the service`);
    cleanup().finally(() => process.exit(code));
  });
}
const watchdog = setTimeout(() => {
  console.log(`\n✗ the demo did not finish within ${WATCHDOG_MS / 1000} s; stopping`);
  running.receiver?.killNow();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

console.log('jobhook demo: reference service → signed webhook → Fastify receiver, all on this machine');
try {
  await runDemo();
} catch (err) {
  report.error(err);
}
if (keepOpen.asked && running.sender !== undefined) await stayOpen();
const stopped = await cleanup();
report.title(11, 'Shut down');
const exit = stopped.receiverExit;
const exitText = exit?.code ?? `none (${exit?.signal})`;
let receiverPart = 'the receiver was never started';
if (running.receiver !== undefined) {
  receiverPart = exit?.signalled
    ? `receiver (pid ${running.receiver.pid}) stopped with SIGTERM, exit code ${exitText}`
    : `receiver (pid ${running.receiver.pid}) had already exited, exit code ${exitText}`;
}
report.check(
  (exit === undefined || !exit.signalled || exit.code === 0) && stopped.senderError === undefined,
  `service closed; ${receiverPart}`,
  stopped.senderError === undefined
    ? 'the receiver should exit 0 on SIGTERM'
    : `closing the service failed: ${stopped.senderError.message}`,
);

const seconds = ((performance.now() - started) / 1000).toFixed(1);
if (report.failures.length === 0) {
  console.log(`\n✓ all ${report.checks} checks passed in ${seconds} s`);
} else {
  console.log(`\n✗ ${report.failures.length} of ${report.checks} checks failed (${seconds} s):`);
  for (const failure of report.failures) console.log(`  - ${failure}`);
  process.exitCode = 1;
}
// Everything is closed: the process ends by itself. If a handle were left open, say so and end anyway.
setTimeout(() => {
  console.log('✗ something was still open 5 s after shutdown; exiting');
  process.exit(1);
}, 5_000).unref();

async function runDemo() {
  report.title(1, 'Start the reference service and the Fastify example receiver');
  // The signing key first: the receiver needs its public half, and the service the receiver's URL
  // (its page's test-job form starts with it), so the receiver starts before the service.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
  running.tmpDir = mkdtempSync(join(tmpdir(), 'jobhook-demo-'));
  const publicKeyPath = join(running.tmpDir, 'service.public.pem');
  writeFileSync(publicKeyPath, publicKey.export({ type: 'spki', format: 'pem' }));
  const receiver = (running.receiver = startReceiverChild({
    serverPath: join(repoRoot, 'examples/fastify-receiver/server.mjs'),
    publicKeyPath,
    recipientSecret: RECIPIENT_SECRET,
  }));
  const { url: receiverUrl } = await receiver.ready;
  const tap = (running.tap = await startWireTap({ targetUrl: receiverUrl }));
  const hook = `${tap.url}/webhooks/jobs`;

  const sender = (running.sender = await createSender({
    accounts: {
      organizations: [organization('you', 'you@example.com', TOKEN_YOU), organization('another-customer', 'eve@example.org', TOKEN_OTHER)],
    },
    privateKey,
    allowInsecureReceivers: true,
    receiverAllowlist: ['127.0.0.0/8'],
    retryBaseMs: RETRY_BASE_MS,
    attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    // The page's "Submit a test job" form starts with the receiver (through the tap).
    dashboardReceiver: hook,
  }));
  const baseUrl = (running.baseUrl = await sender.listen({ port: 0, host: '127.0.0.1' }));
  report.done(
    `reference service (@jobhook/sender) at ${baseUrl}: memory job store and queue, two organizations (you, another customer), RSA-3072 signing key generated`,
  );
  report.info('allowInsecureReceivers + receiverAllowlist ["127.0.0.0/8"], only because the receiver is local (http://127.0.0.1);');
  report.info('by default the sender, like the service, refuses receivers that are not public https:// URLs');
  report.info(
    `demo timings: first retry after ~${RETRY_BASE_MS} ms (service: 1 s), ${ATTEMPT_TIMEOUT_MS / 1000} s per attempt (service: 30 s)`,
  );
  report.done(`Fastify example receiver (examples/fastify-receiver/server.mjs), pid ${receiver.pid}, at ${receiverUrl}`);
  report.info(
    `JOBHOOK_PUBLIC_KEY=${publicKeyPath} (the service's public key); LOG_LEVEL=info, so it logs each webhook's outcome and profile`,
  );
  report.info('JOBHOOK_RECIPIENT_SECRET=<32 random bytes>: it handles only jobs whose submission carried a tag made with it');
  report.done(`wire tap at ${tap.url} between the two: keeps each delivery's bytes; its ${OUTAGE_ONCE_PATH} path answers 503 once`);
  report.info(`dashboardReceiver: ${hook} (the page's test-job form starts with it)`);

  report.title(2, 'Submit jobs with @jobhook/client');
  running.apiKey = TOKEN_YOU;
  // recipientSecret: every submission with a webhook_receiver carries a recipient tag in user_webhook_parameters.
  const client = createClient({ baseUrl, apiKey: TOKEN_YOU, recipientSecret: RECIPIENT_SECRET });
  // Sent exactly: 1.0 stays 1.0 (rawJson), 2**70 stays an integer (bigint), unicode as is.
  const params = {
    order: 'A-17',
    customer: 'Zoë Ōkubo — 東京 😀',
    weight_kg: rawJson('1.0'),
    ratio: 1e-7,
    big: 2n ** 70n,
    by_page: { 9: 'ok', 10: 'blurred' },
  };
  const submissions = {
    A: [
      {
        model: 'ocr/ocr_async/amazon',
        input: { file: 'https://example.com/receipt-42.pdf' },
        webhook_receiver: hook,
        user_webhook_parameters: params,
      },
      'success + webhook; user_webhook_parameters: 1.0, 2**70, 1e-7, unicode, keys "9" "10"',
    ],
    B: [
      {
        model: 'ocr/ocr_async/google',
        input: { file: 'https://example.com/blurred.pdf', simulate: { outcome: 'fail', error_code: 'provider_timeout' } },
        webhook_receiver: hook,
        user_webhook_parameters: { order: 'A-18' },
      },
      'fail (provider_timeout) + webhook',
    ],
    C: [
      {
        model: 'audio/speech_to_text_async/openai',
        input: { file: 'https://example.com/call.mp3', language: 'fr' },
        webhook_receiver: `${tap.url}${OUTAGE_ONCE_PATH}/webhooks/jobs`,
      },
      `success + webhook through the tap's ${OUTAGE_ONCE_PATH} (first attempt gets 503)`,
    ],
  };
  const id = {};
  for (const [name, [request, what]] of Object.entries(submissions)) {
    id[name] = (await client.submitJob(request)).job_id;
    report.done(`${name}  job ${short(id[name])}  ${request.model.padEnd(34)} ${what}`);
  }

  report.title(3, "Webhooks delivered, verified and handled once (the receiver's own log lines)");
  const handledLines = (jobId) => receiver.lines.filter((e) => e.msg === 'job handled' && e.job_id === jobId);
  for (const name of ['A', 'B', 'C']) {
    const jobId = id[name];
    const outcome = await receiver.waitFor((e) => e.msg === 'jobhook: webhook handled' && e.jobId === jobId, `the handling of job ${name}`);
    // The log line and the answer reach this process on different sockets: wait for both.
    await until(() => tap.deliveriesOf(jobId).at(-1)?.status === 200, `the receiver's answer to job ${name}`);
    const attempts = tap.deliveriesOf(jobId).map((d) => `${d.status}${d.answeredBy === 'tap' ? ' (tap outage)' : ''}`);
    const handled = handledLines(jobId);
    const expected = name === 'B' ? 'fail' : 'success';
    report.check(
      handled.length === 1 && handled[0].status === expected,
      `${name}  ${attempts.join(' → retry → ')}: verified (profile ${outcome.profile}), handled — log: "job handled", status ${handled[0]?.status}`,
      `expected one "job handled" line with status ${expected}, got ${JSON.stringify(handled)}`,
    );
  }
  const [firstA] = tap.deliveriesOf(id.A);
  const bodyA = firstA.body.toString('utf8');
  // The service echoes user_webhook_parameters as user_parameters: the submitter's members and the client's tag.
  const { [RECIPIENT_TAG_KEY]: tagA, ...received } = toLosslessValue(parseBody(firstA.body)).user_parameters;
  const fragments = ['weight_kg', 'big', 'ratio', 'customer'].map(
    (key) => bodyA.match(new RegExp(`"${key}": ("[^"]*"|[^,}]+)`))?.[0] ?? `"${key}": ?`,
  );
  report.check(
    stringifyJson(received) === stringifyJson(params) && bodyA.includes('"weight_kg": 1.0') && bodyA.includes(`"big": ${2n ** 70n}`),
    "A's user_parameters reached the receiver exactly as submitted (1.0 not 1, 2**70 not rounded, same text)",
    `got ${stringifyJson(received)}`,
  );
  report.info(`bytes on the wire: ${fragments.join(' · ')}`);
  report.info(`(the service's body is Python's json.dumps: ASCII escapes; "${received.customer}" once decoded)`);
  report.info(`plus the client's recipient tag, ${RECIPIENT_TAG_KEY}: "${String(tagA).slice(0, 24)}…", which the handler never sees`);

  report.title(4, `Duplicate: POST /v3/universal-ai/async/${short(id.A)}/redeliver sends job A again`);
  await until(async () => (await client.getDeliveries(id.A)).delivery === 'delivered', "the service's record of A's delivery");
  const { round } = await client.redeliver(id.A);
  const duplicate = await receiver.waitFor((e) => e.msg === 'jobhook: webhook duplicate' && e.jobId === id.A, 'the duplicate of job A');
  await until(() => tap.deliveriesOf(id.A)[1]?.status != null, "the receiver's answer to A's redelivery");
  const secondA = tap.deliveriesOf(id.A)[1];
  const sameBytes = secondA.body.equals(firstA.body) && secondA.headers['x-service-signature'] === firstA.headers['x-service-signature'];
  report.check(
    secondA.status === 200 &&
      JSON.parse(secondA.answer).duplicate === true &&
      duplicate.profile !== undefined &&
      handledLines(id.A).length === 1,
    `redelivery round ${round}: verified (profile ${duplicate.profile}), answered ${secondA.status} ${secondA.answer.replace(id.A, short(id.A))}; handler not run again`,
    `status ${secondA.status}, answer ${secondA.answer}, "job handled" lines for A: ${handledLines(id.A).length}`,
  );
  report.info(
    sameBytes ? 'the same body bytes and signature as the first delivery' : 'the redelivered body differs from the first (signed again)',
  );

  report.title(5, "Tampered delivery: A's body edited, its original signature kept, posted to the receiver");
  const tampered = Buffer.from(bodyA.replace('"order": "A-17"', '"order": "A-71"'));
  const headers = Object.fromEntries(
    ['content-type', 'x-service-signature', 'x-service-hash-algorithm', 'x-service-webhook'].map((name) => [name, firstA.headers[name]]),
  );
  const res = await fetch(receiverUrl, { method: 'POST', body: tampered, headers });
  const refusal = await res.json();
  const refusalLine = await receiver.waitFor(
    (e) => e.kind === 'rejected' && e.code === refusal.error?.code,
    'the rejection of the tampered body',
  );
  report.check(
    !tampered.equals(firstA.body) && res.status === 401 && refusal.error?.code === 'ERR_SIGNATURE_INVALID',
    `"order": "A-17" → "A-71": ${res.status} ${refusal.error?.code}: ${refusal.error?.message}`,
    'expected 401 ERR_SIGNATURE_INVALID',
  );
  // The receiver logs the cheap cause; the offline diagnosis (jobhook doctor) names the change.
  const diagnose = (body) => diagnoseDelivery({ method: 'POST', headers, body }, { publicKeys: sender.publicKeyPem });
  const modified = diagnose(tampered);
  report.check(
    refusalLine.cause === 'body-mismatch' && modified.cause === 'body-modified',
    `its log line says cause "${refusalLine.cause}"; diagnosed (jobhook doctor): ${modified.cause}: ${modified.message}`,
    `log cause ${refusalLine.cause}, diagnosis ${modified.cause}`,
  );
  const reserialized = diagnose(Buffer.from(JSON.stringify(JSON.parse(bodyA))));
  report.check(
    reserialized.cause === 'body-reserialized',
    `A's body after JSON.parse + JSON.stringify (a body parser ran first) diagnosed: ${reserialized.cause}; numbers ${reserialized.detail?.numbers?.join(', ')}`,
    `diagnosed ${reserialized.cause}: ${reserialized.message}`,
  );
  report.info(`fix: ${reserialized.fix}`);
  const allHandled = receiver.lines.filter((e) => e.msg === 'job handled');
  const perJob = ['A', 'B', 'C'].map((name) => `${name} ${handledLines(id[name]).length}`).join(', ');
  const requests = receiver.lines.filter((e) => typeof e.msg === 'string' && e.msg.startsWith('jobhook: webhook ')).length;
  report.check(
    allHandled.length === 3 && ['A', 'B', 'C'].every((name) => handledLines(id[name]).length === 1),
    `handler ran once per job (${perJob}) over ${requests} requests that reached the receiver`,
    `"job handled" lines: ${allHandled.length}`,
  );

  report.title(6, "Another customer's job aimed at your receiver (recipient binding)");
  // Its own API key, its own output and parameters; the service signs its webhook with the same key as yours.
  const other = createClient({ baseUrl, apiKey: TOKEN_OTHER });
  const { job_id: jobE } = await other.submitJob({
    model: 'ocr/ocr_async/amazon',
    input: { file: 'https://example.org/forged.pdf', simulate: { output: { paid: true, amount: 1000000 } } },
    webhook_receiver: hook,
    user_webhook_parameters: { order: 'A-17' },
  });
  report.done(`E  job ${short(jobE)}  submitted by another organization with webhook_receiver = your URL, output {"paid": true, ...}`);
  await until(() => tap.deliveriesOf(jobE).at(-1)?.status != null, "the receiver's answer to job E");
  const answerE = tap.deliveriesOf(jobE).at(-1);
  const codeE = JSON.parse(answerE.answer).error?.code;
  const deliveryE = await until(async () => {
    const d = await other.getDeliveries(jobE);
    return d.delivery === 'pending' ? undefined : d;
  }, "the service's record of E's delivery");
  // The answer names no cause (the other organization sees it in its delivery log); the receiver's log does.
  const causeE = await until(
    () => receiver.lines.find((e) => e.jobId === jobE && typeof e.code === 'string' && e.code.startsWith('ERR_RECIPIENT_TAG_'))?.code,
    "the receiver's log line of E's refusal",
  );
  report.check(
    answerE.status === 403 &&
      codeE === 'ERR_RECIPIENT_REFUSED' &&
      causeE === 'ERR_RECIPIENT_TAG_MISSING' &&
      handledLines(jobE).length === 0,
    `E  signature valid, but no recipient tag: ${answerE.status} ${codeE} (the receiver's log: ${causeE}); handler not run`,
    `expected 403 ERR_RECIPIENT_REFUSED, ERR_RECIPIENT_TAG_MISSING in the receiver's log and no "job handled" line, got ${answerE.status} ${answerE.answer}, ${causeE}`,
  );
  report.check(
    deliveryE.delivery === 'rejected' && deliveryE.attempts.length === 1,
    `the service does not retry a 4xx: delivery "${deliveryE.delivery}" after ${deliveryE.attempts.length} attempt`,
    `delivery ${deliveryE.delivery}, ${deliveryE.attempts.length} attempts`,
  );
  report.info('a valid signature proves the service sent a delivery, not that the job is yours: the tag does');

  report.title(7, 'Polling: job D has no webhook_receiver');
  const { job_id: jobD } = await client.submitJob({
    model: 'ocr/ocr_async/amazon',
    input: { file: 'https://example.com/scan.pdf', simulate: { delay_ms: 300 } },
  });
  const pollStarted = performance.now();
  const first = await client.getJob(jobD);
  const finished = await client.pollJob(jobD, { intervalMs: 100, timeoutMs: 10_000 });
  const pollMs = Math.round(performance.now() - pollStarted);
  const deliveriesD = await client.getDeliveries(jobD);
  const text = String(finished.output?.raw_text ?? '').split('\n')[0];
  report.check(
    first.status === 'processing' && finished.status === 'success' && typeof finished.output?.raw_text === 'string',
    `D  job ${short(jobD)}: getJob → "${first.status}"; pollJob → "${finished.status}" after ${pollMs} ms, output.raw_text "${text.slice(0, 40)}…"`,
    `expected processing then success with output.raw_text, got ${first.status} then ${finished.status}`,
  );
  report.check(
    deliveriesD.delivery === null && tap.deliveriesOf(jobD).length === 0,
    `no webhook sent for D (deliveries: delivery ${deliveriesD.delivery}, ${deliveriesD.attempts.length} attempts)`,
  );

  report.title(8, `Delivery log of job C: GET /v3/universal-ai/async/${short(id.C)}/deliveries`);
  const logC = await until(async () => {
    const d = await client.getDeliveries(id.C);
    return d.delivery === 'delivered' ? d : undefined;
  }, "the service's record of C's delivery");
  for (const a of logC.attempts) {
    const next = a.next_delay_ms == null ? '' : `, next attempt in ${a.next_delay_ms} ms`;
    report.info(
      `round ${a.round} attempt ${a.attempt}: ${a.status_code ?? a.error} ${a.outcome}${next} (${a.duration_ms} ms to ${a.address})`,
    );
  }
  const [a1, a2] = logC.attempts;
  report.check(
    logC.attempts.length === 2 &&
      a1?.status_code === 503 &&
      a1?.outcome === 'retry' &&
      a2?.status_code === 200 &&
      a2?.outcome === 'delivered',
    `delivery "${logC.delivery}": 503 retried, then 200`,
    `attempts: ${logC.attempts.map((a) => `${a.status_code ?? a.error} ${a.outcome}`).join(', ')}`,
  );

  report.title(9, "Why not JSON.parse + JSON.stringify? (A's body as delivered)");
  const cmp = compareNaiveAndExact(firstA.body, firstA.headers['x-service-signature'], sender.publicKeyPem);
  report.info(
    `${`jobhook, canonical profile ${cmp.exact.profile}`.padEnd(48)} sha256 ${cmp.exact.digest.slice(0, 16)}…  signature verifies`,
  );
  for (const n of cmp.naive)
    report.info(`${n.name.padEnd(48)} sha256 ${n.digest.slice(0, 16)}…  ${n.verifies ? 'verifies' : 'does not verify'}`);
  report.info('lines that differ, Python canonical  ≠  JavaScript:');
  for (const [python, javascript] of cmp.differences) report.info(`  ${python.padEnd(34)} ≠  ${javascript}`);
  report.info('(floats lose ".0", big integers are rounded, 1e-07 becomes 1e-7, integer-like keys go first;');
  report.info(' hashing the body as sent fails too: its spacing and \\u escapes are not the canonical form)');
  report.check(
    cmp.naive.every((n) => !n.verifies),
    "neither naive digest verifies; jobhook's does",
  );

  report.title(10, `Public signature vectors (${vectorsDir})`);
  const vectors = checkVectors(vectorsDir);
  if (!vectors.found) {
    // They are committed with the repository: their absence is a failed check, never a skip.
    report.check(false, 'the signature vectors are there', `missing: ${vectors.missing.join(', ')}`);
  } else {
    report.check(
      vectors.agree === vectors.total && vectors.total > 0,
      `${vectors.agree}/${vectors.total} vectors agree with their expectation`,
      vectors.disagreeing.slice(0, 5).join('; '),
    );
  }
}

/** `--keep-open`: prints where the page is and waits for Ctrl-C or SIGTERM, the watchdog off. */
async function stayOpen() {
  clearTimeout(watchdog);
  const waiting = new Promise((resolve) => (keepOpen.release = resolve));
  console.log(`\nkept open (--keep-open): the service and the receiver stay up until Ctrl-C`);
  console.log(`  dashboard:     ${running.baseUrl}/dashboard/`);
  console.log(`  inference key: ${running.apiKey}  (enter it in the page)`);
  console.log(
    '  (jobs submitted from the page carry no recipient tag: the receiver refuses them, 403 ERR_RECIPIENT_REFUSED, ERR_RECIPIENT_TAG_MISSING in its log)',
  );
  if (running.tap !== undefined)
    console.log(
      `  receiver URL:  ${running.tap.url}/webhooks/jobs  (the Fastify receiver behind the wire tap: "Submit a test job" starts with it)`,
    );
  await waiting;
  console.log('stopping the receiver and the service');
}

/** Polls `probe` every 20 ms until it returns a truthy value. */
async function until(probe, what, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Stops what started, in order: the service (no new deliveries), the tap, the receiver. Idempotent. */
function cleanup() {
  cleaning ??= (async () => {
    const result = { receiverExit: undefined, senderError: undefined };
    const { sender, tap, receiver, tmpDir } = running;
    if (sender !== undefined) await sender.close().catch((err) => (result.senderError = err));
    if (tap !== undefined) await tap.close().catch(() => {});
    if (receiver !== undefined) result.receiverExit = await receiver.stop();
    if (tmpDir !== undefined) rmSync(tmpDir, { recursive: true, force: true });
    return result;
  })();
  return cleaning;
}

/** One organization of the demo's accounts, with one inference key (no spending cap). */
function organization(id, member, token) {
  return {
    id,
    members: [member],
    keys: [{ id: randomUUID(), token, kind: 'inference', name: 'backend', member, balance: null, revoked: false }],
  };
}
