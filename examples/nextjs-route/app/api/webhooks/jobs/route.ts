// POST /api/webhooks/jobs: the service's signed job webhooks, verified (RSA, canonical JSON) and
// deduplicated by job_id before the handler runs. Env: JOBHOOK_PUBLIC_KEY, the service's public key
// as PEM text (a .env.local file works: next loads it).
import { createFetchHandler, type AsyncJobCompletedEvent, type FetchWebhookHandler } from '@jobhook/core';

// The Node.js runtime: RSA verification uses node:crypto's publicDecrypt, which the Edge runtime lacks.
export const runtime = 'nodejs';

// Made on the first request, not when the module loads: `next build` loads route modules, where the
// key may not be set. It then lives as long as the server process, and so does its in-memory store:
// on one `next start` process a redelivery is answered as a duplicate. On several instances or
// serverless functions, give a shared store (createRedisStore from @jobhook/core/redis).
let handler: FetchWebhookHandler | undefined;

export const POST = (request: Request): Promise<Response> => {
  handler ??= createFetchHandler({
    publicKeys: process.env.JOBHOOK_PUBLIC_KEY ?? '',
    onEvent: handleJob,
  });
  return handler(request);
};

/** Your work goes here; throwing makes the service retry (the answer is a 500). */
async function handleJob(event: AsyncJobCompletedEvent): Promise<void> {
  console.log(JSON.stringify({ msg: 'job webhook handled', job_id: event.job_id, status: event.status }));
}
