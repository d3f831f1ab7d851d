import { stringifyJson } from '@jobhook/core/json';
import { attemptErrorText } from '@jobhook/delivery';
import ipaddr from 'ipaddr.js';
import { jobMembers } from '../jobs/webhook-payload.js';
import type { JobRecord } from '../jobs/job-record.js';
import type { StoredAttempt } from '../jobs/signing-key-id.js';

/**
 * The polling answer of a job (spec §4.3, §2.2) as JSON text, built with the exact JSON text of
 * `output`, `original_response` and `user_parameters` spliced in, so `1.0`, big integers and
 * unicode read back exactly as the webhook carries them.
 *
 * Members: `job_id`, `status` (`processing` until final), `feature`, `subfeature`, `provider`,
 * `model`, `created_at`, `finished_at` (null while processing); once final `output` (success) or
 * `error` (fail) and `cost`; `original_response` when the submission asked for it and the job is
 * final; `user_parameters` when given; `webhook: { receiver, delivery, round }` when a receiver was set.
 */
export function jobViewJson(job: JobRecord): string {
  const view = jobMembers(job);
  if (job.status !== 'processing' && job.cost !== null) view['cost'] = job.cost;
  if (job.webhookReceiver !== null) view['webhook'] = { receiver: job.webhookReceiver, delivery: job.delivery, round: job.deliveryRound };
  return stringifyJson(view);
}

/**
 * One delivery attempt as `GET .../deliveries` (and the dashboard) shows it to the job's submitter
 * (snake_case). Nothing in it may map the service's internal network, since the receiver may be an
 * allow-listed internal service: `response_body` is a jobhook receiver's own answer or null (see
 * `AttemptRecord.responseBody`); `error_message` is the fixed text of `error` (also for records
 * written when the log still held Node's message, which may name internal addresses); `address`
 * only when it is a public (unicast) address, else null. `key_id`, on a 401 answer, is the id of the
 * key the webhook was signed with, as the receiver logs the ids of its own keys (`keyIdsTried`); null otherwise.
 */
export function attemptView(a: StoredAttempt): Record<string, unknown> {
  return {
    round: a.round,
    attempt: a.attempt,
    started_at: a.startedAt,
    duration_ms: a.durationMs,
    url: a.url,
    address: publicAddress(a.address),
    status_code: a.statusCode,
    error: a.error,
    error_message: attemptErrorText(a.error),
    outcome: a.outcome,
    next_delay_ms: a.nextDelayMs,
    // Absent in records written before they existed: null, as for an attempt without an answer.
    response_bytes: a.responseBytes ?? null,
    response_body: a.responseBody ?? null,
    key_id: a.keyId ?? null,
  };
}

/** `address` when it is a public unicast address (ipaddr.js range `unicast`, IPv4-mapped IPv6 read as IPv4), else null. */
function publicAddress(address: string | null): string | null {
  if (address === null || !ipaddr.isValid(address)) return null;
  return ipaddr.process(address).range() === 'unicast' ? address : null;
}
