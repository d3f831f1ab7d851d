// An app that submits async jobs and receives their results. POST /jobs submits the JSON body as a
// job whose webhook_receiver points back here; the webhook handler writes one row per job to
// job_results (through the job's transaction, ctx.db, on PostgreSQL); the reconciler polls the jobs
// whose result has not arrived JOBHOOK_RESULT_DEADLINE_MS after their submission and hands them to
// the same handler through the same idempotency claim. See README.md.
//
// Env: DATABASE_URL (required: job_results, and the store and ledger by default), JOBHOOK_SERVICE_URL,
// JOBHOOK_API_KEY, JOBHOOK_PUBLIC_KEY (PEM path), PUBLIC_URL (what the service calls, default
// http://127.0.0.1:PORT), PORT (3000), HOST (127.0.0.1), JOBHOOK_RESULT_DEADLINE_MS (600000),
// JOBHOOK_STORE (postgres | redis, default postgres; redis needs REDIS_URL: claims and ledger there,
// job_results still in PostgreSQL, written outside any transaction), JOBHOOK_RECIPIENT_SECRET (optional:
// recipient tags on submissions, checked on webhooks; the ledger entries are keyed by the tags' nonces).
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';
import { createClient, createReconciler } from '@jobhook/client';
import { createReceiver } from '@jobhook/core';
import { createReceiverMetrics, createReconcilerMetrics } from '@jobhook/core/metrics';
import { jobhookFastify } from '@jobhook/fastify';
import { closeOnSignal, log } from '../receiver-lib/app-process.mjs';

const required = (name) => {
  const value = process.env[name];
  if (!value) {
    console.error(`job-app: set ${name} (see examples/job-app/README.md)`);
    process.exit(2);
  }
  return value;
};

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const publicUrl = (process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, '');
const webhookPath = '/webhooks/jobs';
const deadlineMs = Number(process.env.JOBHOOK_RESULT_DEADLINE_MS ?? 600_000);
const storeKind = process.env.JOBHOOK_STORE ?? 'postgres';
// Optional: tags each submission and refuses webhooks of jobs that are not ours (see the client README).
const recipientSecret = process.env.JOBHOOK_RECIPIENT_SECRET || undefined;

const pool = new pg.Pool({ connectionString: required('DATABASE_URL') });
pool.on('error', (err) => log({ level: 'error', msg: 'idle database connection failed', err: err.message }));
await pool.query(`CREATE TABLE IF NOT EXISTS job_results (
  id bigserial PRIMARY KEY,
  job_id text NOT NULL,
  status text NOT NULL,
  source text NOT NULL,
  handled_at timestamptz NOT NULL DEFAULT now()
)`);

let store;
let ledger;
if (storeKind === 'redis') {
  const { createRedisStore, createRedisLedger } = await import('@jobhook/core/redis');
  store = createRedisStore({ redis: required('REDIS_URL') });
  ledger = createRedisLedger({ redis: required('REDIS_URL') });
} else {
  const { createPostgresStore, createPostgresLedger } = await import('@jobhook/postgres');
  store = createPostgresStore({ pool });
  ledger = createPostgresLedger({ pool });
  await store.migrate();
  await ledger.migrate();
}

const receiverMetrics = createReceiverMetrics();
const receiver = createReceiver({
  publicKeys: readFileSync(required('JOBHOOK_PUBLIC_KEY')),
  store,
  ledger,
  ...(recipientSecret === undefined ? {} : { recipientSecret }),
  onOutcome: receiverMetrics.observe,
  // Once per job, whether its result came by webhook or by poll (ctx.source). Throw to be retried.
  onEvent: async (event, ctx) => {
    // ctx.db: the job's transaction on PostgreSQL (the row commits with the done mark); the pool on Redis.
    await (ctx.db ?? pool).query('INSERT INTO job_results (job_id, status, source) VALUES ($1, $2, $3)', [
      ctx.jobId,
      event.status,
      ctx.source,
    ]);
    log({ msg: 'job handled', job_id: ctx.jobId, status: event.status, source: ctx.source });
  },
});

const client = createClient({
  baseUrl: required('JOBHOOK_SERVICE_URL'),
  apiKey: required('JOBHOOK_API_KEY'),
  ledger,
  resultDeadlineMs: deadlineMs,
  ...(recipientSecret === undefined ? {} : { recipientSecret }),
});
const reconciler = createReconciler({
  client,
  ledger,
  receiver,
  metrics: createReconcilerMetrics({ registry: receiverMetrics.registry }),
  // A short deadline (a demo, a test) polls often; the defaults suit a deadline of minutes.
  intervalMs: Math.max(200, Math.min(5_000, Math.floor(deadlineMs / 4))),
  pollBackoffMs: Math.max(500, Math.min(30_000, deadlineMs)),
  onOutcome: (o) => {
    if (o.kind !== 'pending')
      log({ msg: 'reconciled', kind: o.kind, job_id: o.jobId, key: o.key, ...(o.reason ? { reason: o.reason } : {}) });
  },
});

const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
app.register(jobhookFastify(receiver, { path: webhookPath }));
app.post('/jobs', async (request, reply) => {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return reply.code(400).send({ error: 'the body must be a job: { "model": "...", "input": { ... } }' });
  }
  try {
    const job = await client.submitJob({ ...body, webhook_receiver: `${publicUrl}${webhookPath}` });
    log({ msg: 'job submitted', job_id: job.job_id });
    return reply.code(202).send({ job_id: job.job_id });
  } catch (err) {
    // The service's own 4xx (bad model, no credits) is the caller's; anything else is ours (502).
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 502;
    return reply.code(status).send({ error: err.code ?? 'ERR_SUBMIT', message: err.message });
  }
});
app.get('/jobs/:id', async (request) => {
  const { rows } = await pool.query('SELECT status, source, handled_at FROM job_results WHERE job_id = $1 ORDER BY id', [
    String(request.params.id).toLowerCase(),
  ]);
  return { job_id: request.params.id, results: rows };
});
app.get('/healthz', async () => ({ ok: true }));
app.get('/metrics', async (_request, reply) =>
  reply.type(receiverMetrics.registry.contentType).send(await receiverMetrics.registry.metrics()),
);

closeOnSignal(async () => {
  await reconciler.stop();
  await app.close();
  await store.close();
  await ledger.close();
  await pool.end();
});

await app.listen({ port, host });
reconciler.start();
log({
  msg: 'listening',
  port: app.server.address().port,
  webhook: `${publicUrl}${webhookPath}`,
  deadline_ms: deadlineMs,
  store: storeKind,
});
