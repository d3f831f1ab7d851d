// A Fastify app that receives the service's signed job webhooks on WEBHOOK_PATH.
// Env: see ../receiver-lib/receiver-setup.mjs (and HOST, 0.0.0.0; LOG_LEVEL, Fastify's pino logger: warn shows rejected webhooks and errors).
import Fastify from 'fastify';
import { jobhookFastify } from '@jobhook/fastify';
import { closeOnSignal } from '../receiver-lib/app-process.mjs';
import { log, SERVER_TIMEOUTS, setUpReceiver } from '../receiver-lib/receiver-setup.mjs';

const { port, webhookPath, publicKeys, recipient, recording, store, pool, handlerDelayMs, metrics, close } = await setUpReceiver();
const host = process.env.HOST ?? '0.0.0.0';

const app = Fastify({
  logger: { level: process.env.LOG_LEVEL ?? 'warn', formatters: { level: (level) => ({ level }) } },
  requestTimeout: SERVER_TIMEOUTS.requestTimeout,
  http: { headersTimeout: SERVER_TIMEOUTS.headersTimeout },
});

// The route has its own raw-body parser: the rest of the app keeps Fastify's JSON parser.
app.register(
  jobhookFastify(
    {
      publicKeys,
      // JOBHOOK_RECIPIENT_SECRET: handle only jobs submitted with that secret's tag (see receiver-setup.mjs).
      ...recipient,
      // JOBHOOK_RECORD_DIR: keep every verified delivery there (`jobhook replay`, test fixtures).
      ...recording,
      store,
      logger: app.log,
      // Runs once per job (never for duplicates): do the work here, or enqueue it. Throw to get a retry.
      // db: the job's transaction with the Postgres store (the insert commits with the done mark).
      onEvent: async (event, { profile, db }) => {
        await (db ?? pool)?.query('INSERT INTO job_results (job_id, status) VALUES ($1, $2)', [event.job_id, event.status]);
        log({ msg: 'job handled', job_id: event.job_id, status: event.status, profile });
        if (handlerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerDelayMs));
      },
      onOutcome: metrics.observe,
    },
    { path: webhookPath },
  ),
);
app.get('/healthz', async () => ({ ok: true }));
app.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));

closeOnSignal(async () => {
  await app.close();
  await close();
});

// Handlers first: a SIGTERM right after the 'listening' line must still shut down cleanly.
await app.listen({ port, host });
log({ msg: 'listening', port: app.server.address().port, path: webhookPath });
