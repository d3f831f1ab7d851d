// An Express app that receives the service's signed job webhooks on WEBHOOK_PATH.
// Env: PORT (3000), JOBHOOK_PUBLIC_KEY (PEM path; ../keys/demo.public.pem), REDIS_URL (optional), WEBHOOK_PATH.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { createMemoryStore } from '@jobhook/core';
import { createReceiverMetrics } from '@jobhook/core/metrics';
import { createExpressMiddleware } from '@jobhook/express';

const port = Number(process.env.PORT ?? 3000);
const webhookPath = process.env.WEBHOOK_PATH ?? '/webhooks/jobs';
const publicKeyPath = process.env.JOBHOOK_PUBLIC_KEY ?? fileURLToPath(new URL('../keys/demo.public.pem', import.meta.url));
const log = (fields) => console.log(JSON.stringify({ level: 'info', time: new Date().toISOString(), ...fields }));

// Redis when several instances share the work; otherwise one process's memory.
const store = process.env.REDIS_URL
  ? (await import('@jobhook/core/redis')).createRedisStore({ redis: process.env.REDIS_URL })
  : createMemoryStore();

// Prometheus metrics of every request (handled, duplicate, rejected, ...), answered at GET /metrics.
const metrics = createReceiverMetrics();

const app = express();

// The webhook route comes before express.json(): the middleware needs the body's exact bytes.
app.post(
  webhookPath,
  createExpressMiddleware({
    publicKeys: readFileSync(publicKeyPath),
    store,
    // Runs once per job (never for duplicates): do the work here, or enqueue it. Throw to get a retry.
    onEvent: async (event, { profile }) => {
      log({ msg: 'job handled', job_id: event.job_id, status: event.status, profile });
    },
    onOutcome: metrics.observe,
  }),
);

app.use(express.json());
app.get('/healthz', (_req, res) => {
  res.json({ ok: true });
});
app.get('/metrics', async (_req, res) => {
  res.set('content-type', metrics.registry.contentType).send(await metrics.registry.metrics());
});

const server = app.listen(port, (err) => {
  if (err) throw err;
  log({ msg: 'listening', port: server.address().port, path: webhookPath });
});

function shutdown(signal) {
  log({ msg: 'shutting down', signal });
  // Stops accepting, lets requests in progress finish, then closes the store.
  server.close(async () => {
    await store.close();
    process.exit(0);
  });
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
