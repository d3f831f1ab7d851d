// A Fastify app that receives the service's signed job webhooks on WEBHOOK_PATH.
// Env: PORT (3000), HOST (0.0.0.0), JOBHOOK_PUBLIC_KEY (PEM path; ../keys/demo.public.pem), REDIS_URL (optional),
// WEBHOOK_PATH (/webhooks/jobs), LOG_LEVEL (Fastify's pino logger; warn: rejected webhooks and errors).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { createMemoryStore } from '@jobhook/core';
import { createReceiverMetrics } from '@jobhook/core/metrics';
import { jobhookFastify } from '@jobhook/fastify';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '0.0.0.0';
const webhookPath = process.env.WEBHOOK_PATH ?? '/webhooks/jobs';
const publicKeyPath = process.env.JOBHOOK_PUBLIC_KEY ?? fileURLToPath(new URL('../keys/demo.public.pem', import.meta.url));
const log = (fields) => console.log(JSON.stringify({ level: 'info', time: new Date().toISOString(), ...fields }));

// Redis when several instances share the work; otherwise one process's memory.
const store = process.env.REDIS_URL
  ? (await import('@jobhook/core/redis')).createRedisStore({ redis: process.env.REDIS_URL })
  : createMemoryStore();

// Prometheus metrics of every request (handled, duplicate, rejected, ...), answered at GET /metrics.
const metrics = createReceiverMetrics();

const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn', formatters: { level: (level) => ({ level }) } } });

// The route has its own raw-body parser: the rest of the app keeps Fastify's JSON parser.
app.register(
  jobhookFastify(
    {
      publicKeys: readFileSync(publicKeyPath),
      store,
      logger: app.log,
      // Runs once per job (never for duplicates): do the work here, or enqueue it. Throw to get a retry.
      onEvent: async (event, { profile }) => {
        log({ msg: 'job handled', job_id: event.job_id, status: event.status, profile });
      },
      onOutcome: metrics.observe,
    },
    { path: webhookPath },
  ),
);
app.get('/healthz', async () => ({ ok: true }));
app.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));

let closing = false;
async function shutdown(signal) {
  if (closing) return;
  closing = true;
  log({ msg: 'shutting down', signal });
  // Stops accepting, lets requests in progress finish, then closes the store.
  setTimeout(() => process.exit(1), 10_000).unref();
  try {
    await app.close();
    await store.close();
    process.exit(0);
  } catch (err) {
    app.log.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

// Handlers first: a SIGTERM right after the 'listening' line must still shut down cleanly.
await app.listen({ port, host });
log({ msg: 'listening', port: app.server.address().port, path: webhookPath });
