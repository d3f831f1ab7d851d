// What the three example receivers share, so each server.mjs keeps only its framework's part and the
// handler: configuration from the environment, the idempotency store, the job_results table, the
// Prometheus metrics and a JSON log line.
// Env: PORT (3000), JOBHOOK_PUBLIC_KEY (PEM path; ../keys/demo.public.pem), DATABASE_URL, REDIS_URL,
// JOBHOOK_STORE (redis|memory, optional), HANDLER_DELAY_MS (0), WEBHOOK_PATH (/webhooks/jobs),
// JOBHOOK_RECIPIENT_SECRET (handle only jobs tagged with it; comma-separated for a rotation, newest
// first), JOBHOOK_RECIPIENT_URL (this receiver's public URL(s), comma-separated), JOBHOOK_RECIPIENT_CHECK
// (enforce, the default, or log: the rollout mode), JOBHOOK_RECORD_DIR (keep every verified delivery there,
// for `jobhook replay` and test fixtures; the files hold payloads and recipient tags: keep it private).
import { readFileSync } from 'node:fs';
import { log } from './app-process.mjs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createMemoryStore } from '@jobhook/core';
import { createReceiverMetrics } from '@jobhook/core/metrics';

/**
 * Node's HTTP server limits for every route of the example apps (Node's own defaults are 60 s for
 * the head and 300 s for the whole request): the service gives up on a delivery attempt after 30 s
 * (spec §8), so nothing it sends needs longer, and a client holding a connection open with a
 * trickled head or body is cut off. The webhook route is tighter still: its body must arrive within
 * the receiver's `bodyTimeoutMs` (5 s by default).
 */
export const SERVER_TIMEOUTS = Object.freeze({ headersTimeout: 10_000, requestTimeout: 30_000 });

export { log };

/**
 * Reads the environment and opens the store. PostgreSQL (DATABASE_URL): each job's job_results row
 * and its done mark commit in one transaction, exactly once even across crashes. Redis (REDIS_URL):
 * instances share claims. Otherwise: memory. JOBHOOK_STORE=redis|memory keeps the claims there while
 * job_results stays in PostgreSQL (the crash test compares the two).
 */
export async function setUpReceiver() {
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
  const publicKeyPath = process.env.JOBHOOK_PUBLIC_KEY ?? fileURLToPath(new URL('../keys/demo.public.pem', import.meta.url));
  return {
    port: Number(process.env.PORT ?? 3000),
    /** Recipient binding options, spread into the receiver's: empty without JOBHOOK_RECIPIENT_SECRET. */
    recipient: recipientOptions(),
    /** `record` options, spread into the receiver's: empty without JOBHOOK_RECORD_DIR. */
    recording: process.env.JOBHOOK_RECORD_DIR ? { record: { dir: process.env.JOBHOOK_RECORD_DIR } } : {},
    webhookPath: process.env.WEBHOOK_PATH ?? '/webhooks/jobs',
    publicKeys: readFileSync(publicKeyPath),
    store,
    /** job_results is written through the job's transaction (`ctx.db`) when there is one, else the pool. */
    pool,
    /** Crash tests widen the window between the insert and the commit with it. */
    handlerDelayMs: Number(process.env.HANDLER_DELAY_MS ?? 0),
    /** Prometheus metrics of every request (handled, duplicate, rejected, ...), answered at GET /metrics. */
    metrics: createReceiverMetrics(),
    async close() {
      await store.close();
      await pool?.end();
    },
  };
}

/** A comma-separated variable as a list (one item as a string), or undefined when unset or empty. */
function listEnv(name) {
  const items = (process.env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) return undefined;
  return items.length === 1 ? items[0] : items;
}

/**
 * JOBHOOK_RECIPIENT_SECRET turns recipient binding on: a verified delivery runs the handler only when
 * its job was submitted with a tag made with that secret (`createClient({ recipientSecret })`);
 * another organization's job aimed at this URL, or one carrying a tag copied from another job, gets
 * 403 ERR_RECIPIENT_REFUSED (the cause, e.g. ERR_RECIPIENT_TAG_MISSING, is in this app's log only).
 */
function recipientOptions() {
  const recipientSecret = listEnv('JOBHOOK_RECIPIENT_SECRET');
  if (recipientSecret === undefined) return {};
  const recipientUrl = listEnv('JOBHOOK_RECIPIENT_URL');
  const recipientCheck = process.env.JOBHOOK_RECIPIENT_CHECK || undefined;
  return {
    recipientSecret,
    ...(recipientUrl === undefined ? {} : { recipientUrl }),
    ...(recipientCheck === undefined ? {} : { recipientCheck }),
  };
}
