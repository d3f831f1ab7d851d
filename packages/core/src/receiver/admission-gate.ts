import { JobhookError } from '../errors.js';
import { BodyAdmission, type AdmissionSetup } from './body-admission.js';
import { clientKey } from './client-key.js';
import type { CheckedHead } from './head-checks.js';
import type { ReceiverAnswers } from './receiver-answers.js';
import type { Precheck, RequestHead } from './receiver-types.js';

/** What the admission stage needs of its receiver: the admissions' setup, less the bookkeeping it owns. @internal */
export type AdmissionGateSetup = Omit<AdmissionSetup, 'signatureDone'> & {
  readonly answers: ReceiverAnswers;
  readonly maxBodyBytes: number;
  readonly retryAfterSeconds: number;
};

/**
 * The admission stage, after the head stage let a request through: one body at a time per signature
 * and client, then the admission the body is read under (charged as it arrives, within its pace).
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
    signatureDone: (key: string) => {
      if (key !== '') signaturesInFlight.delete(key);
    },
  };

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
