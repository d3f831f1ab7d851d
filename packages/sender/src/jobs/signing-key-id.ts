import type { AttemptRecord, Deliverer, DeliveryLog, DeliverySubject } from '@jobhook/delivery';

/**
 * An attempt as the sender records it: the delivery engine's record, plus on a 401 answer the id of
 * the key the webhook was signed with, in the form a receiver logs as `keyIdsTried` (lowercase hex
 * SHA-256 of the public key's SPKI DER, core's `RingKey.id`). A receiver that answers 401
 * `unknown-key` holds another key: the two ids side by side say which.
 */
export interface StoredAttempt extends AttemptRecord {
  /** On a 401 answer only: the signing key's id. Absent otherwise (and in records written before it existed). */
  keyId?: string;
}

/** `record` with `keyId` when its answer was 401, else `record` itself. @internal */
export function withSigningKeyId(record: AttemptRecord, keyId: string): StoredAttempt {
  return record.statusCode === 401 ? { ...record, keyId } : record;
}

/** The deliveries log the deliverer writes to, with {@link withSigningKeyId} applied to every attempt appended. @internal */
export function stampingKeyId<J extends DeliverySubject>(log: DeliveryLog<J>, keyId: string): DeliveryLog<J> {
  return {
    get: (jobId) => log.get(jobId),
    appendAttempt: (jobId, attempt) => log.appendAttempt(jobId, withSigningKeyId(attempt, keyId)),
    endRound: (jobId, round, state) => log.endRound(jobId, round, state),
  };
}

/** `deliverer` whose returned records carry the key id too (what the job service logs). @internal */
export function deliveringKeyId<J extends DeliverySubject>(deliverer: Deliverer<J>, keyId: string): Deliverer<J> {
  return {
    webhook: (job) => deliverer.webhook(job),
    attempt: async (task) => withSigningKeyId(await deliverer.attempt(task), keyId),
  };
}
