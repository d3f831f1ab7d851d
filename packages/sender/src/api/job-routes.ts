import { randomUUID } from 'node:crypto';
import { isJobhookError } from '@jobhook/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatInstant } from '../accounts/date-time.js';
import { jobPrice } from '../accounts/pricing.js';
import { UUID_PATTERN } from '../accounts/validate-accounts-config.js';
import type { JobRecord } from '../jobs/job-record.js';
import { ApiError, badRequest, notFound } from './api-error.js';
import { callerOf, requireKey, type ApiContext } from './api-context.js';
import { jsonObjectBody } from './http-setup.js';
import { attemptView, jobViewJson } from './job-view.js';
import { checkPayloadCanonicalSize } from './payload-size.js';
import { validateSubmission } from './validate-submission.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const INFERENCE = { kind: 'inference' } as const;

/** The caller organization's job `job_id`, or the one 404 for unknown, malformed and foreign ids. @internal */
export async function ownJob(context: ApiContext, request: FastifyRequest): Promise<JobRecord> {
  const { job_id: jobId } = request.params as { job_id: string };
  if (!UUID_PATTERN.test(jobId)) throw notFound('job');
  const job = await context.jobs.get(jobId.toLowerCase());
  if (job === undefined || job.organizationId !== callerOf(request).organizationId) throw notFound('job');
  return job;
}

/**
 * The universal AI routes: submit (`POST /v3/universal-ai/async`, 201), poll
 * (`GET /v3/universal-ai/async/{job_id}`), and the extensions `GET .../{job_id}/deliveries` and
 * `POST .../{job_id}/redeliver` (202; 409 when it cannot start a round, 429 with `Retry-After`
 * within the redeliver cooldown). Inference keys only.
 */
export function registerJobRoutes(app: FastifyInstance, context: ApiContext): void {
  const onRequest = requireKey(context, INFERENCE);

  app.post('/v3/universal-ai/async', { onRequest }, async (request, reply) => {
    const key = callerOf(request);
    const submission = validateSubmission(jsonObjectBody(request));
    const job: JobRecord = {
      jobId: randomUUID(),
      organizationId: key.organizationId,
      keyId: key.id,
      feature: submission.feature,
      subfeature: submission.subfeature,
      provider: submission.provider,
      model: submission.model,
      status: 'processing',
      createdAt: formatInstant(context.now()),
      finishedAt: null,
      inputJson: submission.inputJson,
      webhookReceiver: submission.webhookReceiver,
      userParametersJson: submission.userParametersJson,
      showOriginalResponse: submission.showOriginalResponse,
      simulate: submission.simulate,
      outputJson: null,
      error: null,
      originalResponseJson: null,
      cost: null,
      delivery: submission.webhookReceiver === null ? null : 'pending',
      deliveryRound: 0,
    };
    if (job.webhookReceiver !== null) {
      // A webhook payload its receiver would refuse (413), and that would cost the sender a huge
      // canonical form: refused here, before the DNS check and the charge. Jobs without a receiver
      // have no payload to canonicalize.
      checkPayloadCanonicalSize(job, context.now(), context.maxCanonicalBytes);
      try {
        await context.checkReceiver(job.webhookReceiver);
      } catch (err) {
        if (isJobhookError(err, 'ERR_RECEIVER_REFUSED')) {
          // The guard's messages already name the field; other guards' might not.
          throw badRequest(err.message.startsWith('webhook_receiver') ? err.message : `webhook_receiver refused: ${err.message}`);
        }
        throw err;
      }
    }
    const price = jobPrice(submission.feature);
    const charge = await context.accounts.charge(key, price);
    if (!charge.ok) throw new ApiError(402, charge.detail);
    try {
      await context.service.submit(job, submission.simulate.delayMs ?? context.jobDelayMs);
    } catch (err) {
      // The answer is the submission's error; a refund that fails too (Redis down) is only logged.
      await context.accounts
        .refund(key, price)
        .catch((refundErr: unknown) => context.logger.error({ err: refundErr, keyId: key.id, price }, 'refund failed'));
      throw err;
    }
    reply.code(201).header('location', `/v3/universal-ai/async/${job.jobId}`).type(JSON_TYPE).send(jobViewJson(job));
  });

  app.get('/v3/universal-ai/async/:job_id', { onRequest }, async (request, reply) => {
    const job = await ownJob(context, request);
    reply.type(JSON_TYPE).send(jobViewJson(job));
  });

  app.get('/v3/universal-ai/async/:job_id/deliveries', { onRequest }, async (request) => {
    const job = await ownJob(context, request);
    const attempts = await context.jobs.listAttempts(job.jobId);
    return { job_id: job.jobId, delivery: job.delivery, round: job.deliveryRound, attempts: attempts.map(attemptView) };
  });

  app.post('/v3/universal-ai/async/:job_id/redeliver', { onRequest }, async (request, reply) => {
    const job = await ownJob(context, request);
    const result = await context.service.redeliver(job);
    if (!result.ok && result.reason === 'cooldown') {
      const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      throw new ApiError(429, `this job was redelivered less than the cooldown ago; retry in ${seconds} s`, {
        'retry-after': String(seconds),
      });
    }
    if (!result.ok) {
      const detail = {
        limit: `this job was redelivered ${job.deliveryRound} times, the most allowed for one job; it is not redelivered again`,
        processing: 'the job is still processing; its webhook is sent when it finishes',
        no_receiver: 'the job has no webhook_receiver',
        // The round in `job` may be stale (a concurrent redeliver may have started the next): none cited.
        pending:
          'a delivery of this job is still pending (or another redeliver just started one); poll its deliveries and retry when it has ended',
      }[result.reason];
      throw new ApiError(409, detail);
    }
    reply.code(202);
    return { job_id: job.jobId, round: result.round };
  });
}
