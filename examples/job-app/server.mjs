// An app that submits async jobs and receives their results. POST /jobs (with the app's token)
// submits { model, input } as a job whose webhook_receiver points back here; the webhook handler
// writes one row per job to job_results (through the job's transaction, ctx.db, on PostgreSQL); the
// reconciler polls the jobs whose result has not arrived JOBHOOK_RESULT_DEADLINE_MS after their
// submission and hands them to the same handler through the same idempotency claim. GET /metrics
// is on its own listener (METRICS_HOST:METRICS_PORT, loopback by default). See README.md.
//
// Env (checked at start, see job-app-config.mjs and README.md): JOB_APP_TOKEN, DATABASE_URL,
// JOBHOOK_SERVICE_URL, JOBHOOK_API_KEY, JOBHOOK_PUBLIC_KEY (required); PUBLIC_URL, PORT, HOST,
// METRICS_PORT, METRICS_HOST, JOBHOOK_RESULT_DEADLINE_MS, JOB_APP_MAX_OUTSTANDING, JOBHOOK_STORE
// (postgres | redis with REDIS_URL), JOBHOOK_RECIPIENT_SECRET, LOG_LEVEL.
import Fastify from 'fastify';
import pg from 'pg';
import { createClient, createReconciler, isServiceApiError } from '@jobhook/client';
import { createReceiver } from '@jobhook/core';
import { createReceiverMetrics, createReconcilerMetrics } from '@jobhook/core/metrics';
import { jobhookFastify } from '@jobhook/fastify';
import { closeOnSignal, log } from '../receiver-lib/app-process.mjs';
import { SERVER_TIMEOUTS } from '../receiver-lib/receiver-setup.mjs';
import { AppError, errorHandler, notFound } from './app-answers.mjs';
import { requireToken } from './app-token.mjs';
import { readConfig, stop } from './job-app-config.mjs';
import { MAX_JOB_BODY_BYTES, readJobId, readJobRequest } from './job-request.mjs';
import { createOutstandingLimit } from './outstanding-limit.mjs';

const config = readConfig();
const webhookPath = '/webhooks/jobs';
const webhookUrl = `${config.publicUrl}${webhookPath}`;

const pool = new pg.Pool({ connectionString: config.databaseUrl });
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
if (config.storeKind === 'redis') {
  const { createRedisStore, createRedisLedger } = await import('@jobhook/core/redis');
  store = createRedisStore({ redis: config.redisUrl });
  ledger = createRedisLedger({ redis: config.redisUrl });
} else {
  const { createPostgresStore, createPostgresLedger } = await import('@jobhook/postgres');
  store = createPostgresStore({ pool });
  ledger = createPostgresLedger({ pool });
  await store.migrate();
  await ledger.migrate();
}

const { recipientSecret } = config;
const receiverMetrics = createReceiverMetrics();
const receiver = createReceiver({
  publicKeys: config.publicKeys,
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
  baseUrl: config.serviceUrl,
  apiKey: config.apiKey,
  ledger,
  resultDeadlineMs: config.deadlineMs,
  ...(recipientSecret === undefined ? {} : { recipientSecret }),
});
const reconciler = createReconciler({
  client,
  ledger,
  receiver,
  metrics: createReconcilerMetrics({ registry: receiverMetrics.registry }),
  // A short deadline (a demo, a test) polls often; the defaults suit a deadline of minutes.
  intervalMs: Math.max(200, Math.min(5_000, Math.floor(config.deadlineMs / 4))),
  pollBackoffMs: Math.max(500, Math.min(30_000, config.deadlineMs)),
  onOutcome: (o) => {
    if (o.kind !== 'pending')
      log({ msg: 'reconciled', kind: o.kind, job_id: o.jobId, key: o.key, ...(o.reason ? { reason: o.reason } : {}) });
  },
});
const outstanding = createOutstandingLimit({ ledger, max: config.maxOutstanding });

const fastifyOptions = {
  logger: { level: config.logLevel },
  requestTimeout: SERVER_TIMEOUTS.requestTimeout,
  http: { headersTimeout: SERVER_TIMEOUTS.headersTimeout },
};
const app = Fastify(fastifyOptions);
app.setErrorHandler(errorHandler(log));
app.setNotFoundHandler(notFound);
app.register(jobhookFastify(receiver, { path: webhookPath }));

// The token is checked before the body is read (onRequest); the body is parsed only up to MAX_JOB_BODY_BYTES.
const withToken = { onRequest: requireToken(config.token) };
app.post('/jobs', { ...withToken, bodyLimit: MAX_JOB_BODY_BYTES }, async (request, reply) => {
  // Only the fields the app means to send: the webhook is always this app's, and the
  // user_webhook_parameters (where the client puts the recipient tag) are never the caller's.
  const { model, input } = readJobRequest(request.body);
  try {
    const job = await outstanding.run(() => client.submitJob({ model, input, webhook_receiver: webhookUrl }));
    log({ msg: 'job submitted', job_id: job.job_id, model, request_id: request.id });
    return reply.code(202).send({ job_id: job.job_id });
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The service's (or the ledger's) own words stay here, with the job's context; the caller gets a
    // stable code. detail.jobId: the job was made but its id could not be written to the ledger.
    log({
      level: 'error',
      msg: 'job submission failed',
      request_id: request.id,
      model,
      code: err.code,
      status: err.status,
      err: err.message,
      ...(typeof err.detail === 'string' ? { service_detail: err.detail } : {}),
      ...(typeof err.detail?.jobId === 'string' ? { job_id: err.detail.jobId } : {}),
    });
    // 400: the service refused this job (its model or input); anything else is not the caller's doing.
    if (isServiceApiError(err) && err.status === 400)
      throw new AppError(400, 'ERR_JOB_REFUSED', `the service refused the job; the app's log has why (request ${request.id})`);
    throw new AppError(502, 'ERR_SUBMIT_FAILED', `the job could not be submitted; the app's log has why (request ${request.id})`);
  }
});
app.get('/jobs/:id', withToken, async (request) => {
  const jobId = readJobId(request.params.id);
  const { rows } = await pool.query('SELECT status, source, handled_at FROM job_results WHERE job_id = $1 ORDER BY id', [jobId]);
  return { job_id: jobId, results: rows };
});
app.get('/healthz', async () => ({ ok: true }));

// Metrics on a listener of their own, on loopback by default: job counts and the service's
// answers are the operator's, not the public's.
const metricsApp = Fastify(fastifyOptions);
metricsApp.setErrorHandler(errorHandler(log));
metricsApp.setNotFoundHandler(notFound);
metricsApp.get('/metrics', async (_request, reply) =>
  reply.type(receiverMetrics.registry.contentType).send(await receiverMetrics.registry.metrics()),
);

closeOnSignal(async () => {
  await reconciler.stop();
  await app.close();
  await metricsApp.close();
  await store.close();
  await ledger.close();
  await pool.end();
});

/** Listens, or stops the app with the setting to change when the address is taken or refused. */
async function listen(server, port, host, settings) {
  try {
    await server.listen({ port, host });
  } catch (err) {
    stop(`cannot listen on ${host}:${port} (${settings}): ${err.code ?? err.message}`);
  }
}
await listen(metricsApp, config.metricsPort, config.metricsHost, 'METRICS_PORT, METRICS_HOST');
await listen(app, config.port, config.host, 'PORT, HOST');
reconciler.start();
log({
  msg: 'listening',
  port: app.server.address().port,
  metrics_port: metricsApp.server.address().port,
  webhook: webhookUrl,
  deadline_ms: config.deadlineMs,
  max_outstanding: config.maxOutstanding,
  store: config.storeKind,
});
