// An Express app that receives the service's signed job webhooks on WEBHOOK_PATH.
// Env: PORT (3000), JOBHOOK_PUBLIC_KEY (PEM path; ../keys/demo.public.pem), DATABASE_URL, REDIS_URL, JOBHOOK_STORE (optional),
// HANDLER_DELAY_MS (0), WEBHOOK_PATH.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express from 'express';
import pg from 'pg';
import { createMemoryStore } from '@jobhook/core';
import { createReceiverMetrics } from '@jobhook/core/metrics';
import { createExpressMiddleware } from '@jobhook/express';

const port = Number(process.env.PORT ?? 3000);
const webhookPath = process.env.WEBHOOK_PATH ?? '/webhooks/jobs';
const publicKeyPath = process.env.JOBHOOK_PUBLIC_KEY ?? fileURLToPath(new URL('../keys/demo.public.pem', import.meta.url));
const log = (fields) => console.log(JSON.stringify({ level: 'info', time: new Date().toISOString(), ...fields }));

// PostgreSQL (DATABASE_URL): each job's job_results row and its done mark commit in one transaction,
// exactly once even across crashes. Redis (REDIS_URL): instances share claims. Otherwise: memory.
// JOBHOOK_STORE=redis|memory keeps the claims there while job_results stays in PostgreSQL.
const pool = process.env.DATABASE_URL ? new pg.Pool({ connectionString: process.env.DATABASE_URL }) : undefined;
pool?.on('error', (err) => log({ level: 'error', msg: 'idle database connection failed', err: err.message }));
const storeKind = process.env.JOBHOOK_STORE ?? (pool ? 'postgres' : process.env.REDIS_URL ? 'redis' : 'memory');
const store =
  storeKind === 'postgres'
    ? (await import('@jobhook/postgres')).createPostgresStore({ pool })
    : storeKind === 'redis'
      ? (await import('@jobhook/core/redis')).createRedisStore({ redis: process.env.REDIS_URL })
      : createMemoryStore();
await store.migrate?.();
await pool?.query(
  'CREATE TABLE IF NOT EXISTS job_results (id bigserial PRIMARY KEY, job_id text NOT NULL, status text NOT NULL, handled_at timestamptz DEFAULT now())',
);
// Crash tests widen the window between the insert and the commit with it.
const handlerDelayMs = Number(process.env.HANDLER_DELAY_MS ?? 0);

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
    // db: the job's transaction with the Postgres store (the insert commits with the done mark).
    onEvent: async (event, { profile, db }) => {
      await (db ?? pool)?.query('INSERT INTO job_results (job_id, status) VALUES ($1, $2)', [event.job_id, event.status]);
      log({ msg: 'job handled', job_id: event.job_id, status: event.status, profile });
      if (handlerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerDelayMs));
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
    await pool?.end();
    process.exit(0);
  });
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
