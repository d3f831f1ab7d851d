// A receiver instance for test/e2e/receiver-crash.test.ts: core's pipeline on a shared Redis store,
// served by plain node:http, with the lease and Retry-After scaled down so the test takes seconds.
// HANDLER=hang: the handler logs that it started and never returns (the test SIGKILLs the process
// then, claim held). Otherwise it logs "job handled". One JSON line per event on stdout.
// Env: PORT, JOBHOOK_PUBLIC_KEY (PEM path), REDIS_URL, LEASE_MS, RETRY_AFTER_S, HANDLER.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createReceiver } from '@jobhook/core';
import { createRedisStore } from '@jobhook/core/redis';

const env = process.env;
const log = (fields) => console.log(JSON.stringify(fields));

const receiver = createReceiver({
  publicKeys: readFileSync(env.JOBHOOK_PUBLIC_KEY),
  store: createRedisStore({ redis: env.REDIS_URL }),
  leaseMs: Number(env.LEASE_MS),
  retryAfterSeconds: Number(env.RETRY_AFTER_S),
  onOutcome: (outcome) => log({ msg: 'answered', status: outcome.status, kind: outcome.kind, jobId: outcome.jobId }),
  onEvent: async (event) => {
    log({ msg: 'handler started', jobId: event.job_id });
    if (env.HANDLER === 'hang') await new Promise(() => {});
    log({ msg: 'job handled', jobId: event.job_id });
  },
});

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    void receiver.handle({ method: req.method ?? 'POST', headers: req.headers, rawBody: Buffer.concat(chunks) }).then((answer) => {
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
});
server.listen(Number(env.PORT ?? 0), '127.0.0.1', () => log({ msg: 'listening', port: server.address().port }));
