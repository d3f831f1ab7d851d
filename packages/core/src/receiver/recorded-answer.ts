import type { RecordDelivery } from '../diagnosis/delivery-recording.js';
import { afterTurn, type SameTurn } from '../internal/same-turn.js';
import type { ReceiverResponse, RequestHead } from './receiver-types.js';

/**
 * Hands a verified delivery and its answer to `record` once answered (the write itself comes later,
 * never making the answer wait on the disk), and gives the answer back.
 * @internal
 */
export function recordedAnswer(
  record: RecordDelivery,
  head: RequestHead,
  body: Uint8Array,
  arrivedAt: number,
  answer: SameTurn<ReceiverResponse>,
): Promise<ReceiverResponse> {
  const keep = (response: ReceiverResponse): ReceiverResponse => {
    const { status, kind, code, jobId } = response.outcome;
    record({ method: head.method, headers: head.headers, body }, arrivedAt, { status, kind, code, jobId });
    return response;
  };
  return Promise.resolve(afterTurn(answer, keep));
}
