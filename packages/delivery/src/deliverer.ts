import { silentLogger } from '@jobhook/core';
import type { SignOptions } from '@jobhook/core/sign';
import { attemptErrorText } from './attempt-error-text.js';
import { classifyAnswer, type AnswerClass } from './classify-answer.js';
import { resolveDelivererOptions, type DelivererOptions } from './options/deliverer-options.js';
import type { DeliverySubject } from './delivery-log.js';
import type { AttemptRecord, DeliveryTask } from './delivery-types.js';
import { postWebhook } from './post-webhook.js';
import { refusalReason } from './receiver-refusal.js';
import { createSignedPayloadCache, type SignedWebhook } from './signed-payload-cache.js';
import type { ReceiverTarget } from './ssrf-guard.js';

/** Makes webhook delivery attempts; the queue schedules them. `J` is the job record of the service's store. */
export interface Deliverer<J extends DeliverySubject = DeliverySubject> {
  /**
   * Makes attempt `task.attempt` of round `task.round`: loads the job, SSRF-resolves its
   * `webhook_receiver` again, takes the signed payload (profile `python`; canonicalized and signed
   * at the job's first attempt in this process, then kept: see {@link createDeliverer}), POSTs it to the checked address,
   * classifies the answer, appends the record (`jobs.appendAttempt`) and sets the delivery state on
   * final outcomes. Never throws for receiver problems (only when the job store fails); schedule the
   * next attempt after `record.nextDelayMs` when `outcome === 'retry'`.
   *
   * Not recorded (returned only, outcome `rejected`): a task of an older round than
   * `job.deliveryRound` (error `stale_round`), of a round no longer pending (`round_ended`), an
   * unknown job (`job_not_found`), a job without receiver (`no_receiver`). Recorded and final: SSRF refusal (`ssrf_refused`, nothing sent), a
   * payload that cannot be built or signed, or whose canonical form may exceed `maxCanonicalBytes` (`payload_invalid`). A host name that does not resolve
   * is a network error (`ENOTFOUND`, `EAI_AGAIN`), retried. A recorded attempt's `errorMessage` is
   * the fixed text of its `error` ({@link attemptErrorText}); Node's own message goes to the logger
   * only (warn, `detail`), as it may name internal addresses and host names.
   */
  attempt(task: DeliveryTask): Promise<AttemptRecord>;
  /**
   * The webhook of final job `job` exactly as the attempts send it: the body and every header
   * (signature, `User-Agent`), from the same signed-payload cache (signed now, and kept, when not
   * there). For showing a job's webhook (the sender's `GET …/webhook`): one signing path, so what is
   * shown is what was sent. Call it only once the job's payload is final (its attempts start then).
   * @throws JobhookError when the payload cannot be built or signed.
   */
  webhook(job: J): Promise<SignedWebhook>;
}

/**
 * Creates a webhook deliverer: one call per attempt, the queue schedules them.
 *
 * A job's payload is canonicalized and signed once, at its first attempt, and the signed bytes are
 * kept for its retries and redelivery rounds (a final job's payload never changes, and the key is
 * fixed for the deliverer's life): a bounded in-memory cache (`signedCacheEntries`,
 * `signedCacheBytes`, least recently used dropped first). Not stored with the job: after a restart,
 * or when another sender process (Redis) takes an attempt over, that process signs the job once
 * again, to the same bytes (the signature is deterministic); nothing is lost, and memory stays bounded.
 *
 * @example
 * ```ts
 * const deliverer = createDeliverer({ jobs, payload: (job) => JSON.stringify({ job_id: job.jobId }), privateKey: loadPrivateKey(pem), policy: createRetryPolicy(), guard: createSsrfGuard() });
 * const record = await deliverer.attempt({ jobId, round: 0, attempt: 1 });
 * if (record.outcome === 'retry') await queue.enqueueDelivery({ jobId, round: 0, attempt: 2 }, record.nextDelayMs ?? 0);
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` (or `ERR_KEY_INVALID` for the key) on a wrong option.
 */
export function createDeliverer<J extends DeliverySubject>(options: DelivererOptions<J>): Deliverer<J> {
  const o = resolveDelivererOptions(options);
  const { jobs, policy, guard, now, logger = silentLogger } = o;
  const signed = createSignedPayloadCache({ maxEntries: o.signedCacheEntries, maxBytes: o.signedCacheBytes });
  const signOptions: SignOptions = {
    profile: 'python',
    bodyStyle: o.bodyStyle,
    headerNames: o.headerNames,
    maxCanonicalBytes: o.maxCanonicalBytes,
  };
  const signJob = async (job: J): Promise<SignedWebhook> => {
    // The canonical bytes are made on the event loop, the RSA operation on the thread pool; both
    // once per job (and process), not per attempt.
    const { body, headers } = await o.sign(Buffer.from(o.payload(job), 'utf8'), o.privateKey, signOptions);
    // Only the body and headers are kept (not the canonical bytes).
    return { body, headers: { ...headers, 'User-Agent': o.userAgent } };
  };

  return {
    // Shown on request (the page, GET …/webhook): a cached signature is reused, but one signed for a
    // look is not kept, so browsing old jobs never evicts the signatures of jobs being delivered.
    webhook: (job) => signed.peek(job.jobId) ?? signJob(job),
    async attempt(task) {
      const startedMs = now();
      const job = await jobs.get(task.jobId);
      const record = (url: string, fields: Partial<AttemptRecord> & Pick<AttemptRecord, 'outcome'>): AttemptRecord => ({
        round: task.round,
        attempt: task.attempt,
        startedAt: new Date(startedMs).toISOString().replace('Z', '+00:00'),
        durationMs: Math.max(0, now() - startedMs),
        url,
        address: null,
        statusCode: null,
        error: null,
        errorMessage: null,
        nextDelayMs: null,
        responseBytes: null,
        responseBody: null,
        ...fields,
      });
      if (job === undefined) return record('', { outcome: 'rejected', error: 'job_not_found' });
      if (task.round < job.deliveryRound) return record(job.webhookReceiver ?? '', { outcome: 'rejected', error: 'stale_round' });
      if (job.webhookReceiver === null) return record('', { outcome: 'rejected', error: 'no_receiver' });
      // The round was ended meanwhile (given up on by the service): its remaining attempts are not sent.
      if (job.delivery !== 'pending') return record(job.webhookReceiver, { outcome: 'rejected', error: 'round_ended' });
      const url = job.webhookReceiver;
      const deadlineMs = startedMs + o.attemptTimeoutMs;

      const save = async (full: AttemptRecord): Promise<AttemptRecord> => {
        // The log gets Node's message (it may name internal addresses and host names); the record,
        // which the submitter can read back, a fixed text per error code.
        const rec: AttemptRecord = { ...full, errorMessage: attemptErrorText(full.error) };
        if (full.error !== null && full.errorMessage !== null && full.errorMessage !== rec.errorMessage) {
          logger.warn(
            { jobId: job.jobId, round: rec.round, attempt: rec.attempt, error: rec.error, detail: full.errorMessage },
            'webhook attempt error detail (service log only)',
          );
        }
        await jobs.appendAttempt(job.jobId, rec);
        // Only if the round is still pending: a late answer never overwrites a newer round or an ended one.
        if (rec.outcome !== 'retry') await jobs.endRound(job.jobId, task.round, rec.outcome);
        // Debug only: the job service logs each outcome at info/warn.
        logger.debug(
          {
            jobId: job.jobId,
            round: rec.round,
            attempt: rec.attempt,
            outcome: rec.outcome,
            statusCode: rec.statusCode,
            error: rec.error,
            durationMs: rec.durationMs,
          },
          `webhook attempt ${rec.outcome}`,
        );
        return rec;
      };
      const settle = (answer: AnswerClass, address: string | null, answeredMs = now()): Promise<AttemptRecord> => {
        const { kind, retryAfterMs, ...fields } = answer;
        const durationMs = Math.max(0, answeredMs - startedMs);
        if (kind !== 'retryable') return save(record(url, { ...fields, address, durationMs, outcome: kind }));
        const nextDelayMs = policy.nextDelayMs(task.attempt, retryAfterMs);
        return save(record(url, { ...fields, address, durationMs, outcome: nextDelayMs === null ? 'failed' : 'retry', nextDelayMs }));
      };

      let body: Buffer;
      let headers: Record<string, string>;
      try {
        const webhook = await signed.get(job.jobId, () => signJob(job));
        body = webhook.body;
        headers = { ...webhook.headers };
      } catch (err) {
        return save(record(url, { outcome: 'rejected', error: 'payload_invalid', errorMessage: (err as Error).message }));
      }

      // The guard runs again on every attempt: DNS may now answer differently than at submission.
      let checkedUrl: URL;
      let address: ReceiverTarget | 'timeout';
      try {
        checkedUrl = guard.checkUrl(url);
        address = await withDeadline(guard.resolveTarget(checkedUrl), deadlineMs - now());
      } catch (err) {
        const reason = refusalReason(err);
        const message = (err as Error).message;
        if (reason === 'resolve_failed') {
          const code = (err as { detail?: Record<string, unknown> }).detail?.['errorCode'];
          return settle(noAnswer(typeof code === 'string' ? code : 'ENOTFOUND', message), null);
        }
        if (reason !== undefined) return save(record(url, { outcome: 'rejected', error: 'ssrf_refused', errorMessage: message }));
        // A resolver or guard bug is not the receiver's fault: retried, so a fix can still deliver.
        return settle(noAnswer('internal_error', message), null);
      }
      if (address === 'timeout') return settle(noAnswer('timeout', 'the host name did not resolve in time'), null);
      const result = await postWebhook({
        url: checkedUrl,
        address,
        body,
        headers,
        timeoutMs: Math.max(1, Math.ceil(deadlineMs - now())),
        now,
        ...(o.ca === undefined ? {} : { ca: o.ca }),
      });
      return settle(classifyAnswer(result, job.jobId), address.address, result.answeredAt);
    },
  };
}

function noAnswer(error: string, errorMessage: string): AnswerClass {
  return { kind: 'retryable', statusCode: null, error, errorMessage, retryAfterMs: null, responseBytes: null, responseBody: null };
}

/** `promise`'s value, or `'timeout'` after `ms` (the promise keeps running; its result is dropped). @internal */
export async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms), 'timeout')));
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
