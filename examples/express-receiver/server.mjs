// An Express app that receives the service's signed job webhooks on WEBHOOK_PATH.
// Env: see ../receiver-lib/receiver-setup.mjs.
import express from 'express';
import { createExpressMiddleware } from '@jobhook/express';
import { log, SERVER_TIMEOUTS, setUpReceiver } from '../receiver-lib/receiver-setup.mjs';

const { port, webhookPath, publicKeys, recipient, recording, store, pool, handlerDelayMs, metrics, close } = await setUpReceiver();

const app = express();

// The webhook route comes before express.json(): the middleware needs the body's exact bytes.
app.post(
  webhookPath,
  createExpressMiddleware({
    publicKeys,
    // JOBHOOK_RECIPIENT_SECRET: handle only jobs submitted with that secret's tag (see receiver-setup.mjs).
    ...recipient,
    // JOBHOOK_RECORD_DIR: keep every verified delivery there (`jobhook replay`, test fixtures).
    ...recording,
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
Object.assign(server, SERVER_TIMEOUTS);

function shutdown(signal) {
  log({ msg: 'shutting down', signal });
  // Stops accepting, lets requests in progress finish, then closes the store.
  server.close(async () => {
    await close();
    process.exit(0);
  });
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
