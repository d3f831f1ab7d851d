import { resolveProfiles } from '../canonical/canonical-option-checks.js';
import { createDeliveryRecorder } from '../diagnosis/delivery-recording.js';
import { createFailureCapture } from '../diagnosis/failure-capture.js';
import { afterTurn, type SameTurn } from '../internal/same-turn.js';
import { createKeyRing } from '../keys/key-ring.js';
import { createRecipientCheck } from '../recipient/recipient-check.js';
import type { RecoveredDigest } from '../signature/recover-digest.js';
import { bodyBytes } from '../signature/verifier.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createAdmissionGate } from './admission-gate.js';
import { createDeliveryChecks } from './delivery-checks.js';
import { createDeliveryTracing } from './delivery-tracing.js';
import { createPolledHandler } from './handle-polled.js';
import { createHandlerSlots } from './handler-slots.js';
import { createHeadChecks } from './head-checks.js';
import { createJobAnswers } from './job-answers.js';
import { createJobRunner } from './job-runner.js';
import { createNonceBinder } from './nonce-binder.js';
import { createOutcomeLog } from './outcome-log.js';
import { recordedAnswer } from './recorded-answer.js';
import { ReceiverAnswers, type AnswerStats } from './receiver-answers.js';
import type { ReceiverOptions } from './receiver-options.js';
import { resolveReceiverOptions } from './receiver-option-checks.js';
import type { ReceiverStats } from './receiver-outcome.js';
import type { Precheck, Receiver, ReceiverRequest, ReceiverResponse, RequestHead } from './receiver-types.js';

export type { Admission, Precheck, Receiver, ReceiverRequest, ReceiverResponse, RequestHead } from './receiver-types.js';

/**
 * Creates the receive pipeline, in named stages, each check in one of them:
 * 1. head (head-checks.ts): method → content type → declared size → hash-algorithm and signature
 *    headers → RSA recovery of what a configured key signed, before a byte of the body is read;
 * 2. admission (admission-gate.ts, body-admission.ts): one body per signature and client, its
 *    bytes charged to `maxBodyBytesInFlight` as they arrive, within its pace;
 * 3. body (delivery-checks.ts): lossless parse → canonical bytes matched against the recovered
 *    digest → payload shape → recipient tag → replay window;
 * 4. job (job-runner.ts): handler slot → claim (or the store's transaction) → handler → complete |
 *    release → ledger;
 * 5. answer (job-answers.ts, receiver-answers.ts). The answers steer the sender's retries (it retries 5xx, never 4xx): 200 handled or
 * duplicate; 503 + Retry-After when the job is in flight elsewhere, the store is down or the
 * handler is slow, or the body was not read (busy, too slow); 500 when the handler failed;
 * 401/400/405/413/415 for requests to drop. With `record`, a delivery whose signature verified is
 * then handed to the recorder (diagnosis/delivery-recording.ts) with its answer, written later.
 *
 * One pass: each header is read and checked once per request, and what the head step learned (the
 * recovered digests, the declared length) is handed to the body step. A handler that returns no
 * promise, on a store that answers in the same turn (the memory store), runs without a timer or a
 * promise besides the one `handle` returns.
 *
 * @example
 * ```ts
 * const receiver = createReceiver({
 *   publicKeys: readFileSync('service.pem'),
 *   onSuccess: async (event) => saveResult(event.job_id, event.output),
 * });
 * const { status, headers, body } = await receiver.handle({ method, headers: req.headers, rawBody });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID` at construction.
 */
export function createReceiver<Db = undefined>(options: ReceiverOptions<Db>): Receiver {
  const resolved = resolveReceiverOptions(options);
  const { headerNames, logger: log, retryAfterSeconds, limits, eventAge, bigIntegers } = resolved;
  const budget = resolved.bodyBudget;
  const keyRing = createKeyRing(options.publicKeys);
  const ownsStore = options.store === undefined;
  const store = options.store ?? createMemoryStore();
  // With recipientSecret: the tag's check, and its nonce bound to the job in the store (one tag, one job).
  const recipient = createRecipientCheck(options, 'createReceiver', log, eventAge?.clockSkewMs ?? options.clockSkewMs, () =>
    createNonceBinder(store, 'createReceiver', log),
  );
  const slots = createHandlerSlots(resolved.maxConcurrentHandlers);
  // Traces: spans around the entry points and the handler run, identities without a tracer.
  const tracing = createDeliveryTracing(resolved.tracer);
  const stats: AnswerStats = {
    received: 0,
    verified: 0,
    handled: 0,
    duplicates: 0,
    inFlight: 0,
    handlerFailures: 0,
    handlerTimeouts: 0,
    storeUnavailable: 0,
    handlersBusy: 0,
    rejected: {},
  };
  const answers = new ReceiverAnswers({
    stats,
    logOutcome: createOutcomeLog(log),
    onOutcome: options.onOutcome,
    log,
    captureFailure:
      resolved.captureFailures === undefined ? undefined : createFailureCapture(resolved.captureFailures, headerNames, keyRing, log),
    headerNames,
    keyRing,
  });
  // `record`: every delivery whose signature verified, written after its answer.
  const recordDelivery = resolved.record === undefined ? undefined : createDeliveryRecorder(resolved.record, headerNames, keyRing, log);
  const retryAfter = Object.freeze({ 'retry-after': String(retryAfterSeconds) });
  const asIs = (response: ReceiverResponse): ReceiverResponse => response;
  const internal = (err: unknown): ReceiverResponse => answers.internal(err);

  const checkHead = createHeadChecks({ answers, keyRing, headerNames, maxBodyBytes: limits.maxBodyBytes });
  const runJob = createJobRunner<Db>({ ...resolved, handlers: options, store, ledger: options.ledger, slots, tracing, log });
  const jobs = createJobAnswers({ ...resolved, answers, stats, slots, runJob });
  const receiveBody = createDeliveryChecks({
    answers,
    stats,
    // The body stage builds the payload before returning, so its parse may use the scratch tape.
    parseRun: { ...limits, scratch: true },
    profiles: resolveProfiles(options.profiles, 'createReceiver'),
    bigIntegers,
    recipient,
    eventAge,
    log,
    jobs,
  });
  const admit = createAdmissionGate({
    ...resolved,
    budget,
    answers,
    maxBodyBytes: limits.maxBodyBytes,
    receive: receiveSafely,
    refuse: (started, error) => answers.error(started, 'rejected', error, undefined, error.status === 503 ? retryAfter : undefined),
  });

  /** The body stage for a body in hand, never rejecting: a throw is answered 500. */
  function receiveSafely(
    started: number,
    head: RequestHead,
    recovered: readonly RecoveredDigest[],
    body: Uint8Array,
  ): Promise<ReceiverResponse> {
    const verifiedBefore = stats.verified;
    const arrivedAt = recordDelivery === undefined ? 0 : Date.now();
    let answer: SameTurn<ReceiverResponse>;
    try {
      answer = receiveBody(started, head, recovered, body);
    } catch (err) {
      answer = internal(err);
    }
    const safe = afterTurn(answer, asIs, internal);
    // `record`: the body stage counts a verified signature in its first turn (verification is synchronous).
    if (recordDelivery !== undefined && stats.verified !== verifiedBefore)
      return recordedAnswer(recordDelivery, head, body, arrivedAt, safe);
    return Promise.resolve(safe);
  }

  function handle(request: ReceiverRequest): Promise<ReceiverResponse> {
    try {
      const started = performance.now();
      stats.received++;
      const body = bodyBytes(request.rawBody);
      const head = checkHead(started, request, body);
      if (!('recovered' in head)) return Promise.resolve(head);
      return receiveSafely(started, request, head.recovered, body);
    } catch (err) {
      return Promise.resolve(answers.internal(err));
    }
  }

  function precheck(head: RequestHead): Precheck {
    try {
      const started = performance.now();
      stats.received++;
      const checked = checkHead(started, head);
      return 'recovered' in checked ? admit(started, head, checked) : { refusal: checked };
    } catch (err) {
      return { refusal: answers.internal(err) };
    }
  }

  return Object.freeze({
    handle: tracing.handle(handle),
    handlePolled: tracing.polled(createPolledHandler({ bigIntegers, recipient, runJob, log })),
    precheck: tracing.precheck(precheck),
    stats: (): ReceiverStats => ({
      ...stats,
      rejected: { ...stats.rejected },
      bodyBytesInFlight: budget.reserved,
      handlersRunning: slots.running,
    }),
    store,
    async close(): Promise<void> {
      if (ownsStore) await store.close();
    },
  });
}
