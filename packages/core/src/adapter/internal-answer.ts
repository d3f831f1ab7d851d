import { JobhookError } from '../errors.js';
import { jsonHeaders } from '../http/json-answer.js';
import type { ReceiverResponse } from '../receiver/receiver-types.js';

/**
 * The 500 `ERR_INTERNAL` answer for a receiver that threw instead of answering (a `Receiver` of your
 * own making; `createReceiver`'s never throws): adapters always answer, so the sender retries.
 */
export function internalAnswer(cause: unknown): ReceiverResponse {
  const error = new JobhookError('ERR_INTERNAL', 'internal error in the webhook receiver', { cause });
  return {
    status: error.status,
    headers: jsonHeaders({ connection: 'close' }),
    body: JSON.stringify(error.toJSON()),
    outcome: { kind: 'rejected', status: error.status, code: error.code, durationMs: 0 },
  };
}
