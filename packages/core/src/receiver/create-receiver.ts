import { JobhookError, type ErrorCode } from '../errors.js';
import { validateEvent, type AsyncJobCompletedEvent, type FailEvent, type SuccessEvent } from '../events/async-job-event.js';
import { readSignatureHeader } from '../signature/read-signature-header.js';
import { resolveProfiles } from '../canonical/profiles.js';
import { createKeyRing } from '../keys/key-ring.js';
import { verifyBody, type VerifyResult } from '../signature/verifier.js';
import { isTransactionalStore, type IdempotencyStore } from '../store/idempotency-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import { resolveReceiverOptions, type HandlerContext, type ReceiverOptions } from './receiver-options.js';
import type { OutcomeKind, ReceiverOutcome, ReceiverStats } from './receiver-outcome.js';
import { firstHeader, isJsonContentType, type RequestHeaders } from './request-headers.js';
import { runClaimedJob } from './run-claimed-job.js';
import { runInTransaction, type TransactionEnd } from './run-in-transaction.js';
import { checkEventAge } from './event-age.js';
import { createRejectionLogLimit } from './rejection-log-limit.js';
import { registerAdapterView, type RequestHead } from './adapter-view.js';
import { refusalCause, type RefusalCauseFields } from '../diagnosis/refusal-cause.js';
import { createFailureCapture, type FailedRequest } from '../diagnosis/failure-capture.js';
import { polledEvent, type PolledJob, type PolledOutcome } from './polled-job.js';

/** One webhook request, as an adapter read it. */
export interface ReceiverRequest {
  /** HTTP method. */
  method: string;
  /** Request headers (Node's `req.headers`, any record, or a fetch `Headers`). */
  headers: RequestHeaders;
  /** The body bytes exactly as received (never a re-serialized object). */
  rawBody: Uint8Array | string;
}

/** The answer to write back: status, headers and a JSON body. */
export interface ReceiverResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text: `{"ok":true,...}` or `{"error":{"code","message"}}`. */
  body: string;
  /** What happened, for logs and tests. */
  outcome: ReceiverOutcome;
  /** The verified event: set whenever the signature verified, whatever the answer. */
  event?: AsyncJobCompletedEvent;
}

/** The framework-agnostic receive pipeline. */
export interface Receiver {
  /** Runs one request through the pipeline. Never rejects: every failure is an answer. */
  handle(request: ReceiverRequest): Promise<ReceiverResponse>;
  /**
   * Hands a finished job fetched by polling (the reconciler's `GET /v3/universal-ai/async/{job_id}`
   * answer) to the same handlers through the same idempotency claim as its webhook, so the job is
   * handled once whichever comes first (inside the store's transaction on PostgreSQL). The context
   * says `source: 'poll'`; the event is described at {@link HandlerContext.source}. No signature,
   * recipient or age check: the caller vouches for the answer (it came over TLS with the API key).
   * Never rejects: every failure is an outcome.
   */
  handlePolled(job: PolledJob): Promise<PolledOutcome>;
  /** Counters since creation (a copy). */
  stats(): ReceiverStats;
  /** The store in use. */
  readonly store: IdempotencyStore;
  /** Closes a store the receiver created itself (the default memory store). */
  close(): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

/**
 * Creates the receive pipeline:
 * method → content type → size → hash-algorithm and signature headers → lossless parse → canonical
 * bytes → RSA verify against the key ring → payload shape → claim → handler → complete | release →
 * answer. The answers steer the sender's retries (it retries 5xx, never 4xx): 200 handled or
 * duplicate; 503 + Retry-After when the job is in flight elsewhere, the store is down or the
 * handler is slow; 500 when the handler failed; 401/400/405/413/415 for requests to drop.
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
  const { onSuccess, onFail, onEvent, onOutcome, ledger } = options;
  const stats: ReceiverStats = {
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
    resolved.captureFailures === undefined ? undefined : createFailureCapture(resolved.captureFailures, headerNames, log);

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
      const reason = (error?.message ?? '').slice(0, 200);
      const failed = status >= 500;
      // A 500 refusal is our setup or our bug: its error (the cause's stack, or ours) is what to debug.
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
   * The claim and the handlers, as a webhook and a poll share them: in the store's transaction, or
   * claim → handler → complete | release. A handled or duplicate job is then settled in the ledger.
   */
  async function runJob(event: AsyncJobCompletedEvent, context: Omit<HandlerContext<unknown>, 'signal' | 'db'>): Promise<TransactionEnd> {
    const end = transactional
      ? await runInTransaction({
          event,
          store,
          run: runHandlers,
          context,
          doneTtlMs: resolved.doneTtlMs,
          handlerTimeoutMs: resolved.handlerTimeoutMs,
        })
      : await claimAndRun(event, { ...context, db: undefined });
    if ((end.kind === 'done' || end.kind === 'duplicate') && ledger !== undefined) {
      await ledger.settle(context.jobId).catch((err: unknown) => {
        log.warn(
          { jobId: context.jobId, err },
          'jobhook: could not settle the job in the ledger; the reconciler will poll it once and settle it',
        );
      });
    }
    return end;
  }

  async function handlePolled(job: PolledJob): Promise<PolledOutcome> {
    let event: AsyncJobCompletedEvent;
    try {
      event = polledEvent(job, resolved.bigIntegers);
    } catch (error) {
      return { kind: 'rejected', error };
    }
    const jobId = event.job_id.toLowerCase();
    const context = { jobId, source: 'poll' as const, profile: null, keyId: null, headers: {}, log };
    let end: TransactionEnd;
    try {
      end = await runJob(event, context);
    } catch (error) {
      return { kind: 'store-unavailable', jobId, error };
    }
    switch (end.kind) {
      case 'done':
        return { kind: 'handled', jobId };
      case 'duplicate':
        return { kind: 'duplicate', jobId };
      case 'in-flight':
        return { kind: 'in-flight', jobId, retryAfterMs: end.retryAfterMs };
      case 'timeout':
        return { kind: 'handler-timeout', jobId };
      case 'failed':
        return { kind: 'handler-failed', jobId, error: end.error };
    }
  }

  /** The head checks, cheapest first: a refusal, or the decoded signature. `body` when already read (for captures). */
  function checkHead(started: number, { method, headers }: RequestHead, body?: Uint8Array | string): ReceiverResponse | Buffer {
    if (method.toUpperCase() !== 'POST') {
      return rejection(started, 'ERR_METHOD_NOT_ALLOWED', `webhooks are POSTed; got ${method}`, { allow: 'POST' });
    }
    const contentType = firstHeader(headers, 'content-type');
    if (!isJsonContentType(contentType)) {
      return rejection(started, 'ERR_UNSUPPORTED_MEDIA_TYPE', `expected Content-Type application/json, got ${contentType ?? 'none'}`);
    }
    const declared = Number(firstHeader(headers, 'content-length') ?? 0);
    if (declared > limits.maxBodyBytes) {
      return rejection(started, 'ERR_BODY_TOO_LARGE', `Content-Length is ${declared} bytes; the limit is ${limits.maxBodyBytes}`);
    }
    try {
      return readSignatureHeader(headers, headerNames, keyRing);
    } catch (err) {
      if (err instanceof JobhookError) return verifyRefusal(started, err, { method, headers, body });
      throw err;
    }
  }

  async function handle(request: ReceiverRequest): Promise<ReceiverResponse> {
    const started = performance.now();
    stats.received++;
    const head = checkHead(started, request, request.rawBody);
    if (!Buffer.isBuffer(head)) return head;
    const { headers } = request;
    const body = typeof request.rawBody === 'string' ? Buffer.from(request.rawBody, 'utf8') : request.rawBody;
    if (body.length > limits.maxBodyBytes) {
      return rejection(started, 'ERR_BODY_TOO_LARGE', `body has ${body.length} bytes; the limit is ${limits.maxBodyBytes}`);
    }
    let verified: VerifyResult;
    let event: AsyncJobCompletedEvent;
    try {
      // Signature first: nothing of the body is parsed until a configured key decodes the signature.
      verified = verifyBody(body, head, keyRing, profiles, parseRun, resolved.bigIntegers);
    } catch (err) {
      if (err instanceof JobhookError) return verifyRefusal(started, err, { method: request.method, headers, body });
      throw err;
    }
    try {
      stats.verified++;
      event = validateEvent(verified.payload);
    } catch (err) {
      if (err instanceof JobhookError) return errorAnswer(started, 'rejected', err);
      throw err;
    }

    // UUIDs name the same job in either case; the store key is the lower-case form.
    const jobId = event.job_id.toLowerCase();
    const known = { jobId, eventStatus: event.status, profile: verified.profile, keyId: verified.keyId, event };
    if (resolved.eventAge !== undefined) {
      const tooOld = checkEventAge(event.finished_at, Date.now(), resolved.eventAge);
      if (tooOld !== undefined) return errorAnswer(started, 'rejected', tooOld, known);
    }
    const context = { jobId, source: 'webhook' as const, profile: verified.profile, keyId: verified.keyId, headers, log };
    let end: TransactionEnd;
    try {
      end = await runJob(event, context);
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

  async function safeHandle(request: ReceiverRequest): Promise<ReceiverResponse> {
    try {
      return await handle(request);
    } catch (err) {
      // A bug or a non-jobhook throw (a bad headers object, ...): answer 500 rather than crash the server.
      const error = new JobhookError('ERR_INTERNAL', 'internal error in the webhook receiver', { cause: err });
      return errorAnswer(performance.now(), 'rejected', error);
    }
  }

  const receiver: Receiver = Object.freeze({
    handle: safeHandle,
    handlePolled,
    stats: (): ReceiverStats => ({ ...stats, rejected: { ...stats.rejected } }),
    store,
    async close(): Promise<void> {
      if (ownsStore) await store.close();
    },
  });
  // The adapter-only methods (`adapterView` in @jobhook/core/adapter), off the public Receiver.
  registerAdapterView(receiver, {
    handle: safeHandle,
    precheck(head: RequestHead): ReceiverResponse | undefined {
      const started = performance.now();
      const checked = checkHead(started, head);
      if (Buffer.isBuffer(checked)) return undefined;
      stats.received++;
      return checked;
    },
    reject(error: JobhookError): ReceiverResponse {
      stats.received++;
      return errorAnswer(performance.now(), 'rejected', error);
    },
    maxBodyBytes: limits.maxBodyBytes,
  });
  return receiver;
}
