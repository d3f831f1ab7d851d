import { JobhookError } from '../errors.js';
import type { RecoveredDigest } from '../signature/recover-digest.js';
import { bodyBytes, bodyTooLarge } from '../signature/verifier.js';
import { BodyAdmission, type AdmissionSetup } from './body-admission.js';
import { clientKey } from './client-key.js';
import type { CheckedHead } from './head-checks.js';
import type { ReceiverAnswers } from './receiver-answers.js';
import type { Precheck, ReceiverResponse, RequestHead } from './receiver-types.js';

/** What the admission stage needs of its receiver: the admissions' setup, less what it owns. @internal */
export type AdmissionGateSetup = Omit<AdmissionSetup, 'signatureDone' | 'receive'> & {
  readonly answers: ReceiverAnswers;
  readonly maxBodyBytes: number;
  readonly retryAfterSeconds: number;
  /** The body stage, for an admitted body within `maxBodyBytes`; never rejects. */
  receive(started: number, head: RequestHead, recovered: readonly RecoveredDigest[], body: Uint8Array): Promise<ReceiverResponse>;
};

/**
 * The admission stage, after the head stage let a request through: one body at a time per signature
 * and client, then the admission the body is read under (charged as it arrives, within its pace),
 * and the body's length once it is in hand.
 * @internal
 */
export function createAdmissionGate(setup: AdmissionGateSetup): (started: number, head: RequestHead, checked: CheckedHead) => Precheck {
  const { answers, maxBodyBytes, retryAfterSeconds } = setup;
  /**
   * Signatures whose body is being read, each with its client: one body at a time per signature and
   * client, so a captured signature replayed on many connections holds one read, while the service
   * (another address) still delivers the same job. Not for unknown clients: there the service's
   * delivery would share the key with whoever replays its signature.
   */
  const signaturesInFlight = new Map<string, BodyAdmission>();
  const admissionSetup: AdmissionSetup = {
    ...setup,
    receive: receiveAdmitted,
    signatureDone: (key: string) => {
      if (key !== '') signaturesInFlight.delete(key);
    },
  };

  /**
   * An admitted body, in hand: refused here over `maxBodyBytes` (core's readers stop at the
   * admission's `maxBytes`; a reader of your own may hand over more), else on to the body stage.
   */
  function receiveAdmitted(
    started: number,
    head: RequestHead,
    recovered: readonly RecoveredDigest[],
    rawBody: Uint8Array | string,
  ): Promise<ReceiverResponse> {
    try {
      const body = bodyBytes(rawBody);
      const tooLarge = bodyTooLarge(body, maxBodyBytes);
      if (tooLarge !== undefined) return Promise.resolve(answers.error(started, 'rejected', tooLarge));
      return setup.receive(started, head, recovered, body);
    } catch (err) {
      // Neither bytes nor a string (a JavaScript caller's): answered 500, as `handle` answers it.
      return Promise.resolve(answers.internal(err));
    }
  }

  return function admit(started, head, checked) {
    const client = clientKey(head.clientAddress);
    // The digest the first key recovered names the signed payload whatever the header's spelling.
    const signatureKey = client === '' ? '' : `${checked.recovered[0]!.hash.toString('latin1')}|${client}`;
    const holder = signatureKey === '' ? undefined : signaturesInFlight.get(signatureKey);
    if (holder !== undefined) {
      const error = new JobhookError(
        'ERR_RECEIVER_BUSY',
        'a body with this signature from this client is being read already; retry later',
        {
          detail: { cause: 'signature-in-flight' },
        },
      );
      // The holder is done by its deadline (at most bodyTimeoutMs): the sender need not wait longer.
      const wait = { 'retry-after': String(Math.min(retryAfterSeconds, Math.max(1, Math.ceil(holder.msLeft() / 1000)))) };
      return { refusal: answers.error(started, 'rejected', error, undefined, wait) };
    }
    const maxBytes = checked.declared ?? maxBodyBytes;
    const admission = new BodyAdmission(admissionSetup, started, head, checked.recovered, checked.declared, maxBytes, client, signatureKey);
    if (signatureKey !== '') signaturesInFlight.set(signatureKey, admission);
    return { admission };
  };
}
