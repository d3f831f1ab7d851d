import { JobhookError } from '../errors.js';
import { checkEventShape, type AsyncJobCompletedEvent, type FailEvent, type SuccessEvent } from '../events/async-job-event.js';
import { contentLength, firstValue, isJsonContentType, quoteHeader, readHeaders } from '../http/request-headers.js';
import { resolveProfiles } from '../canonical/profiles.js';
import { createKeyRing } from '../keys/key-ring.js';
import { classifySignature } from '../signature/classify-signature-header.js';
import { signatureOf } from '../signature/read-signature-header.js';
import { recoverSignature, type RecoveredDigest } from '../signature/recover-digest.js';
import { verifyRecovered, type VerifyResult } from '../signature/verifier.js';
import { isTransactionalStore, syncClaimsOf, type ClaimResult } from '../store/idempotency-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createFailureCapture } from '../diagnosis/failure-capture.js';
import { createDeliveryRecorder } from '../diagnosis/delivery-recording.js';
import { createRecipientCheck } from '../recipient/recipient-check.js';
import { resolveReceiverOptions, type HandlerContext, type ReceiverOptions } from './receiver-options.js';
import type { ReceiverStats } from './receiver-outcome.js';
import { runClaimedJob, type RunHandlers } from './run-claimed-job.js';
import { runInTransaction, type TransactionEnd } from './run-in-transaction.js';
import { checkEventAge } from './event-age.js';
import { createOutcomeLog } from './outcome-log.js';
import { ReceiverAnswers, type AnswerStats, type VerifiedDetail } from './receiver-answers.js';
import { isThenable } from './is-thenable.js';
import { JobContext } from './job-context.js';
import { BodyAdmission, type AdmissionSetup } from './body-admission.js';
import { clientKey } from './client-key.js';
import { createHandlerSlots } from './handler-slots.js';
import { createDeliveryTracing } from './delivery-tracing.js';
import { polledEvent, type PolledJob, type PolledOutcome } from './polled-job.js';
import type { LosslessJsonValue } from '../canonical/to-value.js';
import type { Precheck, Receiver, ReceiverRequest, ReceiverResponse, RequestHead } from './receiver-types.js';

export type { Admission, Precheck, Receiver, ReceiverRequest, ReceiverResponse, RequestHead } from './receiver-types.js';

const DUPLICATE: TransactionEnd = Object.freeze({ kind: 'duplicate' });

/** How a job's run ended: the store's end, or no handler slot free (nothing claimed). */
type JobEnd = TransactionEnd | { kind: 'handlers-busy' };
const HANDLERS_BUSY: JobEnd = Object.freeze({ kind: 'handlers-busy' });

/** What the head step found: what the configured keys signed, and the declared `Content-Length`. */
interface CheckedHead {
  readonly recovered: readonly RecoveredDigest[];
  readonly declared: number | undefined;
}

/**
 * Creates the receive pipeline:
 * method → content type → declared size → hash-algorithm and signature headers → RSA recovery of
 * what a configured key signed (before a byte of the body is read) → body (its share of
 * `maxBodyBytesInFlight`, `bodyTimeoutMs`) → lossless parse → canonical bytes matched against the
 * recovered digest → payload shape → claim → handler → complete | release →
 * answer. The answers steer the sender's retries (it retries 5xx, never 4xx): 200 handled or
 * duplicate; 503 + Retry-After when the job is in flight elsewhere, the store is down or the
 * handler is slow, or the body was not read (busy, too slow); 500 when the handler failed;
 * 401/400/405/413/415 for requests to drop.
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
  const { headerNames, logger: log, retryAfterSeconds, limits, leaseMs, doneTtlMs, handlerTimeoutMs, eventAge, bigIntegers } = resolved;
  const budget = resolved.bodyBudget;
  // verifyRecovered builds the payload before returning, so its parse may use the scratch tape.
  const parseRun = { ...limits, scratch: true };
  const keyRing = createKeyRing(options.publicKeys);
  const profiles = resolveProfiles(options.profiles, 'createReceiver');
  const ownsStore = options.store === undefined;
  const store = options.store ?? createMemoryStore();
  const claims = syncClaimsOf(store);
  const transactional = isTransactionalStore(store);
  const { onSuccess, onFail, onEvent, ledger } = options;
  // With recipientSecret: the tag's check, and its nonce bound to the job in the store (one tag, one job).
  const recipient = createRecipientCheck(options, 'createReceiver', log, eventAge?.clockSkewMs ?? options.clockSkewMs, store);
  // Backpressure: handlers running at once (handler-slots.ts).
  const slots = createHandlerSlots(resolved.maxConcurrentHandlers);
  // Traces: spans around the entry points and the handler run (tracing/), identities without a tracer.
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
  const recordDelivery = resolved.record === undefined ? undefined : createDeliveryRecorder(resolved.record, headerNames, keyRing, log);
  const retryAfter = Object.freeze({ 'retry-after': String(retryAfterSeconds) });
  /** The headers the head step reads, each once, by their lower-case names (worked out here, not per request). */
  const headNames = ['content-type', 'content-length', headerNames.hashAlgorithm.toLowerCase(), headerNames.signature.toLowerCase()];

  /**
   * onSuccess / onFail, then onEvent. Nothing is returned when every handler returned without a
   * promise; otherwise the promise of their end. `db` is the store's transaction (a
   * TransactionalStore<Db>), or undefined otherwise.
   */
  function runHandlers(event: AsyncJobCompletedEvent, context: JobContext): void | Promise<void> {
    const typed = context as unknown as HandlerContext<Db>;
    const first =
      event.status === 'success'
        ? onSuccess === undefined
          ? undefined
          : onSuccess(event as SuccessEvent, typed)
        : onFail === undefined
          ? undefined
          : onFail(event as FailEvent, typed);
    if (isThenable(first)) return Promise.resolve(first).then(() => (onEvent === undefined ? undefined : settled(onEvent(event, typed))));
    if (onEvent === undefined) return undefined;
    const last = onEvent(event, typed);
    return isThenable(last) ? settled(last) : undefined;
  }

  /**
   * `Retry-After` of an in-flight answer. A live holder renews its lease every `leaseMs / 3`, so its
   * lease never has less than about two thirds left: the sender is told `retryAfterSeconds`, and its
   * few retries are not spent while a long handler runs. Less than half left means renewals stopped
   * (the holder died or stalled): the sender comes back when the lease ends and the job is free.
   */
  function inFlightRetryAfter(leaseLeftMs: number): number {
    if (!Number.isFinite(leaseLeftMs) || leaseLeftMs >= leaseMs / 2) return retryAfterSeconds;
    return Math.max(1, Math.min(retryAfterSeconds, Math.ceil(leaseLeftMs / 1000)));
  }

  /** claim → handler → complete | release (stores without transactions); in this turn when the store and the handler allow. */
  function claimAndRun(event: AsyncJobCompletedEvent, context: JobContext, run: RunHandlers): TransactionEnd | Promise<TransactionEnd> {
    if (claims !== undefined) return afterClaim(event, context, run, claims.claim(context.jobId, leaseMs));
    return Promise.resolve(store.claim(context.jobId, { leaseMs })).then((claim) => afterClaim(event, context, run, claim));
  }

  function afterClaim(
    event: AsyncJobCompletedEvent,
    context: JobContext,
    run: RunHandlers,
    claim: ClaimResult,
  ): TransactionEnd | Promise<TransactionEnd> {
    if (claim.state === 'done') return DUPLICATE;
    if (claim.state === 'in-flight') return { kind: 'in-flight', retryAfterMs: claim.retryAfterMs };
    return runClaimedJob({ event, token: claim.token, store, claims, run, context, leaseMs, doneTtlMs, handlerTimeoutMs, log });
  }

  /**
   * The head checks, cheapest first, each header read once, then the RSA recovery: a refusal, or
   * what the configured keys signed. `body` when already read (`handle`): its length is checked
   * with the declared one, before the RSA operation, and it goes into captures.
   */
  function checkHead(started: number, head: RequestHead, body?: Uint8Array): ReceiverResponse | CheckedHead {
    const { method, headers } = head;
    if (method !== 'POST' && method.toUpperCase() !== 'POST') {
      return answers.reject(started, 'ERR_METHOD_NOT_ALLOWED', `webhooks are POSTed; got ${quoteHeader(method)}`, { allow: 'POST' });
    }
    const [typeValue, lengthValue, hashAlgorithm, signature] = readHeaders(headers, headNames);
    const contentType = firstValue(typeValue);
    if (!isJsonContentType(contentType)) {
      return answers.reject(
        started,
        'ERR_UNSUPPORTED_MEDIA_TYPE',
        `expected Content-Type application/json, got ${quoteHeader(contentType)}`,
      );
    }
    const declared = contentLength(firstValue(lengthValue));
    if (declared !== undefined && declared > limits.maxBodyBytes) {
      return answers.reject(started, 'ERR_BODY_TOO_LARGE', `Content-Length is ${declared} bytes; the limit is ${limits.maxBodyBytes}`);
    }
    if (body !== undefined && body.length > limits.maxBodyBytes) {
      return answers.reject(started, 'ERR_BODY_TOO_LARGE', `body has ${body.length} bytes; the limit is ${limits.maxBodyBytes}`);
    }
    try {
      // One RSA public operation per key, whatever the body: a signature no key decodes ends here.
      const decoded = signatureOf(classifySignature(firstValue(hashAlgorithm), signature, keyRing, headerNames, headers));
      return { recovered: recoverSignature(decoded, keyRing), declared };
    } catch (err) {
      if (err instanceof JobhookError) return answers.verifyRefusal(started, err, { method, headers, body });
      throw err;
    }
  }

  /**
   * The body step: verification against the digests the head step recovered, the event's shape, the
   * recipient tag, the replay window, then claim, handler, answer. A promise only when something is
   * pending (an async store or handler, `acceptLateEvent`'s promise).
   */
  function receiveBody(
    started: number,
    head: RequestHead,
    recovered: readonly RecoveredDigest[],
    body: Uint8Array,
  ): ReceiverResponse | Promise<ReceiverResponse> {
    let verified: VerifyResult;
    try {
      verified = verifyRecovered(body, recovered, profiles, parseRun, bigIntegers);
    } catch (err) {
      if (err instanceof JobhookError) return answers.verifyRefusal(started, err, { method: head.method, headers: head.headers, body });
      throw err;
    }
    stats.verified++;
    let finishedMs: number;
    try {
      finishedMs = checkEventShape(verified.payload);
    } catch (err) {
      if (err instanceof JobhookError) return answers.error(started, 'rejected', err);
      throw err;
    }
    const event = verified.payload as AsyncJobCompletedEvent;
    // UUIDs name the same job in either case; the store key is the lower-case form.
    const jobId = event.job_id.toLowerCase();
    if (recipient === undefined) return admitVerified(started, head, verified, event, jobId, finishedMs);
    // Signed, but is the job ours, and the tag's first job? Before the replay window and the claim, and
    // outside any transaction: a refusal never runs the handler, and a binding outlives a failed one.
    const checked = recipient.check(event, Date.now(), jobId);
    if (isThenable(checked)) {
      return checked.then(
        (ended) => afterRecipientCheck(started, head, verified, ended, jobId, finishedMs),
        (err: unknown) => storeFailed(started, err, verifiedDetail(verified, event, jobId)),
      );
    }
    return afterRecipientCheck(started, head, verified, checked, jobId, finishedMs);
  }

  function verifiedDetail(verified: VerifyResult, event: AsyncJobCompletedEvent, jobId: string): VerifiedDetail {
    return { jobId, eventStatus: event.status, profile: verified.profile, keyId: verified.keyId, event };
  }

  function afterRecipientCheck(
    started: number,
    head: RequestHead,
    verified: VerifyResult,
    checked: AsyncJobCompletedEvent | JobhookError,
    jobId: string,
    finishedMs: number,
  ): ReceiverResponse | Promise<ReceiverResponse> {
    if (!(checked instanceof JobhookError)) return admitVerified(started, head, verified, checked, jobId, finishedMs);
    // The body says only ERR_RECIPIENT_REFUSED (JobhookError.toJSON); the outcome and the log keep the cause.
    return answers.error(started, 'rejected', checked, verifiedDetail(verified, verified.payload as AsyncJobCompletedEvent, jobId));
  }

  /** The replay window, then claim, handler, answer, for an event whose recipient tag (if checked) passed. */
  function admitVerified(
    started: number,
    head: RequestHead,
    verified: VerifyResult,
    event: AsyncJobCompletedEvent,
    jobId: string,
    finishedMs: number,
  ): ReceiverResponse | Promise<ReceiverResponse> {
    const { profile, keyId } = verified;
    const detail: VerifiedDetail = { jobId, eventStatus: event.status, profile, keyId, event };
    const context = new JobContext(jobId, 'webhook', profile, keyId, head.headers, log, verified);
    if (eventAge !== undefined) {
      const age = checkEventAge(event, { jobId, profile, keyId, headers: head.headers, log }, Date.now(), eventAge, finishedMs);
      if (isThenable(age)) {
        return age.then((tooOld) =>
          tooOld === undefined ? run(started, event, context, detail) : answers.error(started, 'rejected', tooOld, detail),
        );
      }
      if (age !== undefined) return answers.error(started, 'rejected', age, detail);
    }
    return run(started, event, context, detail);
  }

  /**
   * The claim and the handlers, as a webhook and a poll share them: in the store's transaction, or
   * claim → handler → complete | release. A handled or duplicate job is then settled in the ledger.
   * @throws what the store throws (a promise rejects with it).
   */
  function runJob(event: AsyncJobCompletedEvent, context: JobContext): JobEnd | Promise<JobEnd> {
    // Backpressure: a handler slot before the claim, or busy at once (no lease taken, nothing queued).
    const slot = slots.tryAcquire();
    if (slot === undefined) return HANDLERS_BUSY;
    const run = slot.track(tracing.handler(runHandlers));
    let end: TransactionEnd | Promise<TransactionEnd>;
    try {
      end = transactional
        ? runInTransaction({ event, store, run, context, doneTtlMs, handlerTimeoutMs })
        : claimAndRun(event, context, run);
    } catch (err) {
      slot.done();
      throw err;
    }
    // The slot comes back once the pipeline has its end, or when a handler still running past its timeout settles.
    if (isThenable(end)) {
      end = end.then(
        (ended) => {
          slot.done();
          return ended;
        },
        (err: unknown) => {
          slot.done();
          throw err;
        },
      );
    } else {
      slot.done();
    }
    if (ledger === undefined) return end;
    return isThenable(end) ? end.then((ended) => settleInLedger(ended, context.jobId)) : settleInLedger(end, context.jobId);
  }

  function settleInLedger(end: TransactionEnd, jobId: string): TransactionEnd | Promise<TransactionEnd> {
    if (ledger === undefined || (end.kind !== 'done' && end.kind !== 'duplicate')) return end;
    return Promise.resolve()
      .then(() => ledger.settle(jobId))
      .then(
        () => end,
        (err: unknown) => {
          log.warn({ jobId, err }, 'jobhook: could not settle the job in the ledger; the reconciler will poll it once and settle it');
          return end;
        },
      );
  }

  /** Claim, handler, answer. */
  function run(
    started: number,
    event: AsyncJobCompletedEvent,
    context: JobContext,
    detail: VerifiedDetail,
  ): ReceiverResponse | Promise<ReceiverResponse> {
    let end: JobEnd | Promise<JobEnd>;
    try {
      end = runJob(event, context);
    } catch (err) {
      return storeFailed(started, err, detail);
    }
    if (isThenable(end)) {
      return end.then(
        (ended) => answerEnd(started, ended, detail),
        (err: unknown) => storeFailed(started, err, detail),
      );
    }
    return answerEnd(started, end, detail);
  }

  function storeFailed(started: number, err: unknown, detail: VerifiedDetail): ReceiverResponse {
    stats.storeUnavailable++;
    const error =
      err instanceof JobhookError && err.code === 'ERR_STORE_UNAVAILABLE'
        ? err
        : new JobhookError('ERR_STORE_UNAVAILABLE', 'the idempotency store failed', { cause: err });
    return answers.error(started, 'store-unavailable', error, detail, retryAfter);
  }

  function answerEnd(started: number, end: JobEnd, detail: VerifiedDetail): ReceiverResponse {
    const { jobId } = detail;
    switch (end.kind) {
      case 'done':
        stats.handled++;
        return answers.ok(started, 'handled', detail);
      case 'duplicate':
        stats.duplicates++;
        return answers.ok(started, 'duplicate', detail);
      case 'in-flight': {
        stats.inFlight++;
        const error = new JobhookError('ERR_JOB_IN_FLIGHT', `job ${jobId} is being handled right now; retry later`);
        return answers.error(started, 'in-flight', error, detail, { 'retry-after': String(inFlightRetryAfter(end.retryAfterMs)) });
      }
      case 'timeout': {
        stats.handlerTimeouts++;
        const error = new JobhookError(
          'ERR_HANDLER_TIMEOUT',
          `the handler of job ${jobId} is still running after ${handlerTimeoutMs} ms; retry later`,
        );
        return answers.error(started, 'handler-timeout', error, detail, retryAfter);
      }
      case 'handlers-busy': {
        // Every handler slot taken: the sender retries, nothing was claimed.
        stats.handlersBusy++;
        const error = new JobhookError(
          'ERR_HANDLERS_BUSY',
          `the receiver is running ${slots.capacity} handlers (maxConcurrentHandlers); retry later`,
        );
        return answers.error(started, 'handlers-busy', error, detail, retryAfter);
      }
      case 'failed': {
        stats.handlerFailures++;
        // The handler's own message stays in the logs: it may hold internals the sender must not see.
        const error = new JobhookError('ERR_HANDLER_FAILED', `the handler of job ${jobId} failed; retry later`, { cause: end.error });
        return answers.error(started, 'handler-failed', error, detail);
      }
    }
  }

  /** The body step for a body in hand, never rejecting: a throw is answered 500. */
  function receiveSafely(
    started: number,
    head: RequestHead,
    recovered: readonly RecoveredDigest[],
    body: Uint8Array,
  ): Promise<ReceiverResponse> {
    const verifiedBefore = stats.verified;
    const arrivedAt = recordDelivery === undefined ? 0 : Date.now();
    let answer: ReceiverResponse | Promise<ReceiverResponse>;
    try {
      answer = receiveBody(started, head, recovered, body);
    } catch (err) {
      answer = answers.internal(err);
    }
    const safe = isThenable(answer) ? answer.then(undefined, (err: unknown) => answers.internal(err)) : answer;
    // `record`: receiveBody counts a verified signature in its first turn (verification is synchronous).
    if (recordDelivery !== undefined && stats.verified !== verifiedBefore) return recorded(head, body, arrivedAt, safe);
    return isThenable(safe) ? safe : Promise.resolve(safe);
  }

  /** Hands a verified delivery and its answer to `record` once answered; the write itself comes later. */
  function recorded(
    head: RequestHead,
    body: Uint8Array,
    arrivedAt: number,
    answer: ReceiverResponse | Promise<ReceiverResponse>,
  ): Promise<ReceiverResponse> {
    const keep = (response: ReceiverResponse): ReceiverResponse => {
      const { status, kind, code, jobId } = response.outcome;
      recordDelivery!({ method: head.method, headers: head.headers, body }, arrivedAt, { status, kind, code, jobId });
      return response;
    };
    return isThenable(answer) ? answer.then(keep) : Promise.resolve(keep(answer));
  }

  function handle(request: ReceiverRequest): Promise<ReceiverResponse> {
    try {
      const started = performance.now();
      stats.received++;
      const body = bytesOf(request.rawBody);
      const head = checkHead(started, request, body);
      if (!('recovered' in head)) return Promise.resolve(head);
      return receiveSafely(started, request, head.recovered, body);
    } catch (err) {
      return Promise.resolve(answers.internal(err));
    }
  }

  async function handlePolled(job: PolledJob): Promise<PolledOutcome> {
    let event: AsyncJobCompletedEvent;
    try {
      event = polledEvent(job, bigIntegers);
    } catch (error) {
      return { kind: 'rejected', error };
    }
    const jobId = event.job_id.toLowerCase();
    // No signature covers a poll answer: its lossless form is the answer as the client read it.
    const context = new JobContext(jobId, 'poll', null, null, {}, log, { losslessPayload: () => job as LosslessJsonValue });
    let end: JobEnd;
    try {
      // A valid tag's nonce is bound to this job too, so that a copy on another job's webhook is refused.
      if (recipient !== undefined) await recipient.bindPolled(event, Date.now(), jobId);
      end = await runJob(event, context);
    } catch (error) {
      return { kind: 'store-unavailable', jobId, error };
    }
    switch (end.kind) {
      case 'done':
        return { kind: 'handled', jobId };
      case 'duplicate':
        return { kind: 'duplicate', jobId };
      case 'handlers-busy':
        return { kind: 'handlers-busy', jobId };
      case 'in-flight':
        return { kind: 'in-flight', jobId, retryAfterMs: end.retryAfterMs };
      case 'timeout':
        return { kind: 'handler-timeout', jobId };
      case 'failed':
        return { kind: 'handler-failed', jobId, error: end.error };
    }
  }

  /**
   * Signatures whose body is being read, each with its client: one body at a time per signature and
   * client, so a captured signature replayed on many connections holds one read, while the service
   * (another address) still delivers the same job. Not for unknown clients: there the service's
   * delivery would share the key with whoever replays its signature.
   */
  const signaturesInFlight = new Map<string, BodyAdmission>();
  const admissionSetup: AdmissionSetup = {
    budget,
    bodyTimeoutMs: resolved.bodyTimeoutMs,
    bodyStartTimeoutMs: resolved.bodyStartTimeoutMs,
    minBodyBytesPerSecond: resolved.minBodyBytesPerSecond,
    receive: (started: number, head: RequestHead, recovered: readonly RecoveredDigest[], rawBody: Uint8Array | string) =>
      receiveSafely(started, head, recovered, bytesOf(rawBody)),
    refuse: (started: number, error: JobhookError): ReceiverResponse =>
      answers.error(started, 'rejected', error, undefined, error.status === 503 ? retryAfter : undefined),
    signatureDone: (key: string) => {
      if (key !== '') signaturesInFlight.delete(key);
    },
  };

  function precheck(head: RequestHead): Precheck {
    try {
      const started = performance.now();
      stats.received++;
      const checked = checkHead(started, head);
      if (!('recovered' in checked)) return { refusal: checked };
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
      const maxBytes = checked.declared ?? limits.maxBodyBytes;
      const admission = new BodyAdmission(
        admissionSetup,
        started,
        head,
        checked.recovered,
        checked.declared,
        maxBytes,
        client,
        signatureKey,
      );
      if (signatureKey !== '') signaturesInFlight.set(signatureKey, admission);
      return { admission };
    } catch (err) {
      return { refusal: answers.internal(err) };
    }
  }

  return Object.freeze({
    handle: tracing.handle(handle),
    handlePolled: tracing.polled(handlePolled),
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

/** A handler's promise, its value dropped. */
function settled(value: unknown): Promise<void> | undefined {
  return isThenable(value) ? Promise.resolve(value).then(() => undefined) : undefined;
}

/** A body as bytes: a string is taken as its UTF-8 bytes. */
function bytesOf(rawBody: Uint8Array | string): Uint8Array {
  return typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
}
