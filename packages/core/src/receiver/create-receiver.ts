import { JobhookError, type ErrorCode } from '../errors.js';
import { validateEvent, type AsyncJobCompletedEvent, type FailEvent, type SuccessEvent } from '../events/async-job-event.js';
import { readSignatureHeader } from '../signature/read-signature-header.js';
import { resolveProfiles } from '../canonical/profiles.js';
import { createKeyRing } from '../keys/key-ring.js';
import { recoverSignature, type RecoveredDigest } from '../signature/recover-digest.js';
import { verifyRecovered, type VerifyResult } from '../signature/verifier.js';
import { isTransactionalStore } from '../store/idempotency-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import { resolveReceiverOptions, type HandlerContext, type ReceiverOptions } from './receiver-options.js';
import type { OutcomeKind, ReceiverOutcome, ReceiverStats } from './receiver-outcome.js';
import { firstHeader, isJsonContentType, quoteHeader } from '../http/request-headers.js';
import { runClaimedJob } from './run-claimed-job.js';
import { runInTransaction, type TransactionEnd } from './run-in-transaction.js';
import { checkEventAge } from './event-age.js';
import { createRejectionLogLimit } from '../log/rejection-log-limit.js';
import { createBodyBudget } from './body-budget.js';
import type { Admission, Precheck, Receiver, ReceiverRequest, ReceiverResponse, RequestHead } from './receiver-types.js';
import { refusalCause, type RefusalCauseFields } from '../diagnosis/refusal-cause.js';
import { createFailureCapture, type FailedRequest } from '../diagnosis/failure-capture.js';
import { createRecipientCheck } from '../recipient/recipient-check.js';

export type { Admission, Precheck, Receiver, ReceiverRequest, ReceiverResponse, RequestHead } from './receiver-types.js';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

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
  const { headerNames, logger: log, retryAfterSeconds, limits } = resolved;
  // verifyBody builds the payload before returning, so its parse may use the scratch tape.
  const parseRun = { ...limits, scratch: true };
  const keyRing = createKeyRing(options.publicKeys);
  const profiles = resolveProfiles(options.profiles, 'createReceiver');
  const ownsStore = options.store === undefined;
  const store = options.store ?? createMemoryStore();
  const { onSuccess, onFail, onEvent, onOutcome } = options;
  const recipientCheck = createRecipientCheck(options, 'createReceiver', log, resolved.eventAge?.clockSkewMs ?? options.clockSkewMs);
  const budget = createBodyBudget(resolved.maxBodyBytesInFlight);
  const stats: Omit<ReceiverStats, 'bodyBytesInFlight'> = {
    received: 0,
    verified: 0,
    handled: 0,
    duplicates: 0,
    inFlight: 0,
    handlerFailures: 0,
    handlerTimeouts: 0,
    storeUnavailable: 0,
    rejected: {},
  };

  async function runHandlers(event: AsyncJobCompletedEvent, untyped: HandlerContext<unknown>): Promise<void> {
    // `db` is the store's transaction (a TransactionalStore<Db>), or undefined otherwise.
    const context = untyped as HandlerContext<Db>;
    if (event.status === 'success') {
      if (onSuccess !== undefined) await onSuccess(event as SuccessEvent, context);
    } else if (onFail !== undefined) {
      await onFail(event as FailEvent, context);
    }
    if (onEvent !== undefined) await onEvent(event, context);
  }

  const rejectionLogAllowed = createRejectionLogLimit();
  const captureFailure =
    resolved.captureFailures === undefined ? undefined : createFailureCapture(resolved.captureFailures, headerNames, keyRing, log);

  /**
   * One log line per answer, at the level a team would page on: handler and store failures as
   * errors with `err`, every one; refusals (`rejected`) at most one line per code per minute,
   * whatever the status, since anyone can cause them (a 500 refusal, `ERR_BODY_ALREADY_PARSED` on a
   * misconfigured route or `ERR_INTERNAL`, still at error with `err`; 4xx as warnings); the rest at info.
   */
  function logOutcome(outcome: ReceiverOutcome, error: JobhookError | undefined, cause: RefusalCauseFields | undefined): void {
    const { kind, status } = outcome;
    if (kind === 'handled' || kind === 'duplicate' || kind === 'in-flight') {
      log.info(outcome, `jobhook: webhook ${kind}`);
    } else if (kind === 'handler-timeout') {
      log.warn(outcome, `jobhook: webhook ${kind}; the handler goes on`);
    } else if (kind === 'rejected') {
      const code = outcome.code ?? kind;
      const suppressed = rejectionLogAllowed(code);
      if (suppressed === undefined) return;
      // Whole: our messages are bounded, and the header values they quote are cut where they are quoted.
      const reason = error?.message ?? '';
      // A 500 refusal is our setup or our bug: its error (the cause's stack, or ours) is what to debug.
      // A 503 one (busy, a body too slow) is load anyone can make: a warning.
      const failed = status === 500;
      const err = failed ? (error?.cause ?? error) : error?.cause;
      const fields = { ...outcome, reason, ...cause, ...(suppressed > 0 ? { suppressed } : {}), ...(err === undefined ? {} : { err }) };
      if (failed) log.error(fields, `jobhook: webhook refused (${code}): ${reason}; one line per code per minute`);
      else log.warn(fields, `jobhook: webhook refused (${code}); one line per code per minute`);
    } else {
      // The cause (the handler's or the store's own error, with its stack) is what to debug; our wrapper says where.
      log.error({ ...outcome, err: error?.cause ?? error }, `jobhook: webhook ${kind}: ${error?.message ?? ''}`);
    }
  }

  function answer(
    started: number,
    kind: OutcomeKind,
    status: number,
    body: object,
    detail: Partial<ReceiverOutcome> & { event?: AsyncJobCompletedEvent },
    extraHeaders: Record<string, string> = {},
    error?: JobhookError,
    cause?: RefusalCauseFields,
  ): ReceiverResponse {
    const { event, ...outcomeDetail } = detail;
    const outcome: ReceiverOutcome = { kind, status, ...outcomeDetail, durationMs: performance.now() - started };
    logOutcome(outcome, error, cause);
    if (onOutcome !== undefined) {
      try {
        onOutcome(outcome);
      } catch (err) {
        log.error({ err }, 'jobhook: onOutcome threw');
      }
    }
    return {
      status,
      headers: { ...JSON_HEADERS, ...extraHeaders },
      body: JSON.stringify(body),
      outcome,
      ...(event === undefined ? {} : { event }),
    };
  }

  function errorAnswer(
    started: number,
    kind: OutcomeKind,
    error: JobhookError,
    detail: Partial<ReceiverOutcome> & { event?: AsyncJobCompletedEvent } = {},
    extraHeaders: Record<string, string> = {},
  ): ReceiverResponse {
    if (kind === 'rejected') stats.rejected[error.code] = (stats.rejected[error.code] ?? 0) + 1;
    return answer(started, kind, error.status, error.toJSON(), { code: error.code, ...detail }, extraHeaders, error);
  }

  /** A refusal of the verify path: its log line carries the cheap cause, and `captureFailures` may save the request. */
  function verifyRefusal(started: number, error: JobhookError, request: FailedRequest): ReceiverResponse {
    stats.rejected[error.code] = (stats.rejected[error.code] ?? 0) + 1;
    const cause = refusalCause(error, request.headers, headerNames, keyRing);
    if (cause !== undefined && captureFailure !== undefined) captureFailure(request, { status: error.status, code: error.code, cause });
    return answer(started, 'rejected', error.status, error.toJSON(), { code: error.code }, {}, error, cause);
  }

  function rejection(started: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): ReceiverResponse {
    return errorAnswer(started, 'rejected', new JobhookError(code, message), {}, headers);
  }

  const retryAfter = { 'retry-after': String(retryAfterSeconds) };

  /**
   * `Retry-After` of an in-flight answer. A live holder renews its lease every `leaseMs / 3`, so its
   * lease never has less than about two thirds left: the sender is told `retryAfterSeconds`, and its
   * few retries are not spent while a long handler runs. Less than half left means renewals stopped
   * (the holder died or stalled): the sender comes back when the lease ends and the job is free.
   */
  function inFlightRetryAfter(leaseLeftMs: number): number {
    if (!Number.isFinite(leaseLeftMs) || leaseLeftMs >= resolved.leaseMs / 2) return retryAfterSeconds;
    return Math.max(1, Math.min(retryAfterSeconds, Math.ceil(leaseLeftMs / 1000)));
  }

  const transactional = isTransactionalStore(store);

  /** claim → handler → complete | release, the lease renewed meanwhile (stores without transactions). */
  async function claimAndRun(event: AsyncJobCompletedEvent, context: Omit<HandlerContext<unknown>, 'signal'>): Promise<TransactionEnd> {
    const claim = await store.claim(context.jobId, { leaseMs: resolved.leaseMs });
    if (claim.state === 'done') return { kind: 'duplicate' };
    if (claim.state === 'in-flight') return { kind: 'in-flight', retryAfterMs: claim.retryAfterMs };
    return runClaimedJob({
      event,
      token: claim.token,
      store,
      run: runHandlers,
      context,
      leaseMs: resolved.leaseMs,
      doneTtlMs: resolved.doneTtlMs,
      handlerTimeoutMs: resolved.handlerTimeoutMs,
      log,
    });
  }

  /**
   * The head checks, cheapest first, then the RSA recovery: a refusal, or what the configured keys
   * signed. `body` when already read (`handle`): its length is checked with the declared one, before
   * the RSA operation, and it goes into captures.
   */
  function checkHead(started: number, { method, headers }: RequestHead, body?: Uint8Array): ReceiverResponse | RecoveredDigest[] {
    if (method.toUpperCase() !== 'POST') {
      return rejection(started, 'ERR_METHOD_NOT_ALLOWED', `webhooks are POSTed; got ${quoteHeader(method)}`, { allow: 'POST' });
    }
    const contentType = firstHeader(headers, 'content-type');
    if (!isJsonContentType(contentType)) {
      return rejection(started, 'ERR_UNSUPPORTED_MEDIA_TYPE', `expected Content-Type application/json, got ${quoteHeader(contentType)}`);
    }
    const declared = declaredLength(headers);
    if (declared !== undefined && declared > limits.maxBodyBytes) {
      return rejection(started, 'ERR_BODY_TOO_LARGE', `Content-Length is ${declared} bytes; the limit is ${limits.maxBodyBytes}`);
    }
    if (body !== undefined && body.length > limits.maxBodyBytes) {
      return rejection(started, 'ERR_BODY_TOO_LARGE', `body has ${body.length} bytes; the limit is ${limits.maxBodyBytes}`);
    }
    try {
      // One RSA public operation per key, whatever the body: a signature no key decodes ends here.
      return recoverSignature(readSignatureHeader(headers, headerNames, keyRing), keyRing);
    } catch (err) {
      if (err instanceof JobhookError) return verifyRefusal(started, err, { method, headers, body });
      throw err;
    }
  }

  /** The body step: verification against the digests the head step recovered, then claim, handler, answer. */
  async function receiveBody(
    started: number,
    { method, headers }: RequestHead,
    recovered: readonly RecoveredDigest[],
    body: Uint8Array,
  ): Promise<ReceiverResponse> {
    let verified: VerifyResult;
    let event: AsyncJobCompletedEvent;
    try {
      verified = verifyRecovered(body, recovered, profiles, parseRun, resolved.bigIntegers);
    } catch (err) {
      if (err instanceof JobhookError) return verifyRefusal(started, err, { method, headers, body });
      throw err;
    }
    try {
      stats.verified++;
      event = validateEvent(verified.payload);
    } catch (err) {
      if (err instanceof JobhookError) return errorAnswer(started, 'rejected', err);
      throw err;
    }
    if (recipientCheck !== undefined) {
      // Signed, but is the job ours? Before the replay window and the claim: a refusal never runs the handler.
      const checked = recipientCheck(event, Date.now());
      if (checked instanceof JobhookError) {
        const { profile, keyId } = verified;
        return errorAnswer(started, 'rejected', checked, {
          jobId: event.job_id.toLowerCase(),
          eventStatus: event.status,
          profile,
          keyId,
          event,
        });
      }
      event = checked;
    }

    // UUIDs name the same job in either case; the store key is the lower-case form.
    const jobId = event.job_id.toLowerCase();
    const known = { jobId, eventStatus: event.status, profile: verified.profile, keyId: verified.keyId, event };
    const context = {
      jobId,
      profile: verified.profile,
      keyId: verified.keyId,
      headers,
      log,
      losslessPayload: () => verified.losslessPayload(),
    };
    if (resolved.eventAge !== undefined) {
      const age = checkEventAge(event, context, Date.now(), resolved.eventAge);
      const tooOld = age instanceof Promise ? await age : age;
      if (tooOld !== undefined) return errorAnswer(started, 'rejected', tooOld, known);
    }
    let end: TransactionEnd;
    try {
      end = transactional
        ? await runInTransaction({
            event,
            store,
            run: runHandlers,
            context,
            doneTtlMs: resolved.doneTtlMs,
            handlerTimeoutMs: resolved.handlerTimeoutMs,
          })
        : await claimAndRun(event, { ...context, db: undefined });
    } catch (err) {
      stats.storeUnavailable++;
      const error =
        err instanceof JobhookError && err.code === 'ERR_STORE_UNAVAILABLE'
          ? err
          : new JobhookError('ERR_STORE_UNAVAILABLE', 'the idempotency store failed', { cause: err });
      return errorAnswer(started, 'store-unavailable', error, known, retryAfter);
    }
    if (end.kind === 'duplicate') {
      stats.duplicates++;
      return answer(started, 'duplicate', 200, { ok: true, job_id: jobId, duplicate: true }, known);
    }
    if (end.kind === 'in-flight') {
      stats.inFlight++;
      const error = new JobhookError('ERR_JOB_IN_FLIGHT', `job ${jobId} is being handled right now; retry later`);
      return errorAnswer(started, 'in-flight', error, known, { 'retry-after': String(inFlightRetryAfter(end.retryAfterMs)) });
    }
    if (end.kind === 'done') {
      stats.handled++;
      return answer(started, 'handled', 200, { ok: true, job_id: jobId, duplicate: false }, known);
    }
    if (end.kind === 'timeout') {
      stats.handlerTimeouts++;
      const error = new JobhookError(
        'ERR_HANDLER_TIMEOUT',
        `the handler of job ${jobId} is still running after ${resolved.handlerTimeoutMs} ms; retry later`,
      );
      return errorAnswer(started, 'handler-timeout', error, known, retryAfter);
    }
    stats.handlerFailures++;
    // The handler's own message stays in the logs: it may hold internals the sender must not see.
    const error = new JobhookError('ERR_HANDLER_FAILED', `the handler of job ${jobId} failed; retry later`, {
      cause: end.error,
    });
    return errorAnswer(started, 'handler-failed', error, known);
  }

  /** A bug or a non-jobhook throw (a bad headers object, ...): answered 500 rather than crashing the server. */
  function internalError(err: unknown): ReceiverResponse {
    const error = new JobhookError('ERR_INTERNAL', 'internal error in the webhook receiver', { cause: err });
    return errorAnswer(performance.now(), 'rejected', error);
  }

  async function handle(request: ReceiverRequest): Promise<ReceiverResponse> {
    try {
      const started = performance.now();
      stats.received++;
      const body = bytesOf(request.rawBody);
      const recovered = checkHead(started, request, body);
      if (!Array.isArray(recovered)) return recovered;
      return await receiveBody(started, request, recovered, body);
    } catch (err) {
      return internalError(err);
    }
  }

  const { bodyTimeoutMs } = resolved;

  /** The admission of a body whose signature decoded: its share of the budget, its deadline, and the body step. */
  function admit(started: number, head: RequestHead, recovered: readonly RecoveredDigest[], reserved: number): Admission {
    const deadline = new AbortController();
    let open = true;
    const settle = (): void => {
      if (!open) return;
      open = false;
      clearTimeout(timer);
      budget.release(reserved);
    };
    const timer = setTimeout(() => {
      settle();
      deadline.abort(
        new JobhookError('ERR_BODY_TIMEOUT', `the body did not arrive within ${bodyTimeoutMs} ms (bodyTimeoutMs); retry later`),
      );
    }, bodyTimeoutMs);
    // An open connection keeps the process alive, not the deadline of its body.
    timer.unref();
    return {
      maxBytes: reserved,
      signal: deadline.signal,
      async receive(rawBody) {
        // Verification runs synchronously from here, so the share comes back once the body is verified.
        settle();
        try {
          return await receiveBody(started, head, recovered, bytesOf(rawBody));
        } catch (err) {
          return internalError(err);
        }
      },
      refuse(error) {
        settle();
        return errorAnswer(started, 'rejected', error, {}, error.status === 503 ? retryAfter : {});
      },
    };
  }

  function precheck(head: RequestHead): Precheck {
    try {
      const started = performance.now();
      stats.received++;
      const recovered = checkHead(started, head);
      if (!Array.isArray(recovered)) return { refusal: recovered };
      const reserved = declaredLength(head.headers) ?? limits.maxBodyBytes;
      if (!budget.tryReserve(reserved)) {
        const error = new JobhookError(
          'ERR_RECEIVER_BUSY',
          `the receiver is reading ${budget.reserved} bytes of other bodies (maxBodyBytesInFlight ${resolved.maxBodyBytesInFlight}); retry later`,
        );
        return { refusal: errorAnswer(started, 'rejected', error, {}, retryAfter) };
      }
      return { admission: admit(started, head, recovered, reserved) };
    } catch (err) {
      return { refusal: internalError(err) };
    }
  }

  return Object.freeze({
    handle,
    precheck,
    stats: (): ReceiverStats => ({ ...stats, rejected: { ...stats.rejected }, bodyBytesInFlight: budget.reserved }),
    store,
    async close(): Promise<void> {
      if (ownsStore) await store.close();
    },
  });
}

/** The declared `Content-Length`, when there is one that reads as a length. */
function declaredLength(headers: RequestHead['headers']): number | undefined {
  const value = firstHeader(headers, 'content-length');
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** A body as bytes: a string is taken as its UTF-8 bytes. */
function bytesOf(rawBody: Uint8Array | string): Uint8Array {
  return typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
}
