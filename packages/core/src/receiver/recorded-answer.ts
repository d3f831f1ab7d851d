import type { RecordDelivery } from '../diagnosis/delivery-recording.js';
import { isThenable } from './is-thenable.js';
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
  answer: ReceiverResponse | Promise<ReceiverResponse>,
): Promise<ReceiverResponse> {
  const keep = (response: ReceiverResponse): ReceiverResponse => {
    const { status, kind, code, jobId } = response.outcome;
    record({ method: head.method, headers: head.headers, body }, arrivedAt, { status, kind, code, jobId });
    return response;
  };
  return isThenable(answer) ? answer.then(keep) : Promise.resolve(keep(answer));
}
