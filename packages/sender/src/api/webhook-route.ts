import { canonicalize } from '@jobhook/core/canonical';
import type { FastifyInstance } from 'fastify';
import { requireKey, type ApiContext } from './api-context.js';
import { ApiError } from './api-error.js';
import { ownJob } from './job-routes.js';

/**
 * `GET /v3/universal-ai/async/{job_id}/webhook`: the job's webhook as its attempts send it:
 * `{ job_id, body, canonical, headers }`, the body text, the canonical form the signature covers,
 * and the headers (signature included). Signing is deterministic, so these are the bytes every
 * attempt and round sent; 409 while the job is processing (there is no payload yet).
 */
export function registerWebhookRoute(app: FastifyInstance, context: ApiContext): void {
  app.get('/v3/universal-ai/async/:job_id/webhook', { onRequest: requireKey(context, { kind: 'inference' }) }, async (request) => {
    const job = await ownJob(context, request);
    if (job.status === 'processing') throw new ApiError(409, 'the job is still processing: its webhook is built when it finishes');
    const { body, headers } = await context.signWebhook(job);
    const canonical = canonicalize(body, { maxCanonicalBytes: context.maxCanonicalBytes }).toString('utf8');
    return { job_id: job.jobId, body: body.toString('utf8'), canonical, headers };
  });
}
