import { checkInteger, MAX_TIMER_MS, optionError } from '../internal/option-checks.js';
import { resolveParseOptions, type ResolvedParseOptions } from '../canonical/parse.js';
import type { CanonicalProfile } from '../canonical/profiles.js';
import type { AsyncJobCompletedEvent, FailEvent, SuccessEvent } from '../events/async-job-event.js';
import type { KeyRing, PublicKeyInput } from '../keys/key-ring.js';
import { resolveBigIntegers, type BigIntegers, type LosslessJsonValue } from '../canonical/to-value.js';
import { resolveHeaderNames, type WebhookHeaderNames } from '../signature/headers.js';
import { resolveCaptureFailures, type CaptureFailuresOptions, type ResolvedCaptureFailures } from '../diagnosis/failure-capture.js';
import { resolveRecord, type RecordOptions, type ResolvedRecord } from '../diagnosis/delivery-recording.js';
import type { IdempotencyStore, TransactionalStore } from '../store/idempotency-store.js';
import type { JobLedger } from '../ledger/job-ledger.js';
import { DEFAULT_CLOCK_SKEW_MS, DEFAULT_MAX_EVENT_AGE_MS, type EventAgeLimit, type LateEventRule } from './event-age.js';
import { createJsonLogger, isLogger, type Logger } from '../log/logger.js';
import type { ReceiverOutcome } from './receiver-outcome.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { RecipientOptions } from '../recipient/recipient-check.js';
import { createBodyBudget, isBodyBudget, processBodyBudget, type BodyBudget } from './body-budget.js';
import { checkTracer } from './delivery-tracing.js';
import type { TracerLike } from '../tracing/tracer-like.js';

/**
 * What a handler gets besides the event. `Db` is the transaction a {@link TransactionalStore} hands
 * over (`ctx.db`); with any other store it is `undefined`.
 */
export interface HandlerContext<Db = undefined> {
  /** The event's `job_id` in lower case: the idempotency key (a UUID in either case names one job). */
  jobId: string;
  /**
   * Where the event came from: `'webhook'` (a signed delivery) or `'poll'` (a result the reconciler
   * fetched with `GET /v3/universal-ai/async/{job_id}`, given to `receiver.handlePolled`). A polled
   * event guarantees only `job_id`, `status`, `output` and `error`: `feature`, `subfeature`,
   * `provider`, `model`, `created_at` and `finished_at` are `null` when the poll answer lacks them.
   */
  source: 'webhook' | 'poll';
  /** The canonical profile the signature matched; `null` for a polled event (no signature). */
  profile: CanonicalProfile | null;
  /** Id of the key that verified (SHA-256 of its SPKI DER, hex); `null` for a polled event. */
  keyId: string | null;
  /** The request headers, as the adapter gave them; empty for a polled event. */
  headers: RequestHeaders;
  /**
   * The signed payload with every number exactly as signed (floats as `RawJson` lexemes, integers
   * of any size exact), built from the canonical bytes that verified: see `VerifyResult.losslessPayload`.
   * Use it, not `toLosslessValue(parseBody(rawBody))`, whose lexemes no signature covers.
   */
  losslessPayload(): LosslessJsonValue;
  /**
   * Aborted when `handlerTimeoutMs` elapses (the sender has been told to retry later; the claim is
   * kept until the handler settles), or when a lease renewal finds the claim's lease gone (the store
   * was unreachable, or this process stalled, longer than `leaseMs`): another instance may run the
   * job then. `signal.reason` says which. Pass it to cancellable work, or ignore it.
   */
  signal: AbortSignal;
  /** The receiver's logger. */
  log: Logger;
  /**
   * With a {@link TransactionalStore}: the open transaction the job's done mark commits in. Write
   * through it, and your writes and the done mark commit together, or not at all when the handler
   * throws or the process dies. `undefined` with other stores.
   */
  db: Db;
}

/** A handler of one kind of event. Throwing (or rejecting) makes the sender retry. */
export type EventHandler<E, Db = undefined> = (event: E, context: HandlerContext<Db>) => unknown;

/**
 * Options of `createReceiver`. `Db` is the transaction type of a {@link TransactionalStore}.
 *
 * Every event must reach a handler: give `onEvent`, or both `onSuccess` and `onFail`. A receiver
 * that would acknowledge `status: "fail"` events without running anything is refused at
 * construction (pass `onFail: () => {}` to drop them on purpose).
 */
export interface ReceiverOptions<Db = undefined> extends RecipientOptions {
  /** The service public key(s): PEM (PKCS#1 or SPKI), KeyObject, a list (rotation), or a key ring. Required. */
  publicKeys: PublicKeyInput | readonly PublicKeyInput[] | KeyRing;
  /** Runs for `status: "success"` events. */
  onSuccess?: EventHandler<SuccessEvent, Db>;
  /** Runs for `status: "fail"` events. */
  onFail?: EventHandler<FailEvent, Db>;
  /** Runs for every event, after `onSuccess`/`onFail`. Required unless both of those are given. */
  onEvent?: EventHandler<AsyncJobCompletedEvent, Db>;
  /**
   * Where claims live. Default: a memory store (one process only; use Redis for several instances).
   * A {@link TransactionalStore} (PostgreSQL) runs each handler inside its transaction (`ctx.db`).
   */
  store?: IdempotencyStore | TransactionalStore<Db>;
  /** Canonical profiles tried, in order. Default all four, `python` first. */
  profiles?: readonly CanonicalProfile[];
  /**
   * Lease of a claim, renewed every `leaseMs / 3` while the handler runs. Default
   * {@link DEFAULT_LEASE_MS} (20,000): how long a job stays blocked when the instance holding it dies.
   */
  leaseMs?: number;
  /**
   * How long a handled `job_id` is remembered. Default {@link DEFAULT_DONE_TTL_MS} (7 days). The
   * receiver keeps it at least `maxEventAgeMs + clockSkewMs`, so every delivery young enough to pass
   * the age check finds it.
   */
  doneTtlMs?: number;
  /**
   * The replay window: verified events whose signed `finished_at` is older than this (plus
   * `clockSkewMs`) are refused, 400 `ERR_EVENT_TOO_OLD`, so a captured delivery replayed after its
   * `job_id` left the store (TTL, LRU eviction, a restarted memory store) is not handled twice.
   * Default {@link DEFAULT_MAX_EVENT_AGE_MS} (6 hours: the service's retries of one delivery span
   * about 3.5 minutes; the rest is margin for a late first attempt). `false` turns the check off.
   *
   * A first delivery that arrives later than that gets the same 400, and the service does not retry
   * a 4xx: that result reaches you only by polling the job (`onOutcome` gets each refusal with its
   * `jobId`), or through `acceptLateEvent`. A manual redelivery of an older job needs `acceptLateEvent` too.
   *
   * @example
   * ```ts
   * createReceiver({ publicKeys, onEvent, maxEventAgeMs: 2 * 60 * 60_000 }); // 2 hours
   * ```
   */
  maxEventAgeMs?: number | false;
  /**
   * Admits a verified event past the replay window: called only for such events, after the
   * signature and the payload's shape are checked and before the claim; `true` sends the event on to
   * deduplication and the handler, anything else refuses it (400 `ERR_EVENT_TOO_OLD`); a throw answers
   * 500 `ERR_LATE_EVENT_RULE_FAILED` and the sender retries. Default: none, every late event is
   * refused. Admit only what you expect and have not handled (a ledger of the jobs you submitted):
   * a memory store that restarted has forgotten its done marks, so this rule is then all that stands
   * between a replay and a second run of your handler. Not called when `maxEventAgeMs` is `false`.
   *
   * @example
   * ```ts
   * createReceiver({ publicKeys, onEvent, acceptLateEvent: (event, { jobId }) => ledger.isAwaiting(jobId) });
   * ```
   */
  acceptLateEvent?: LateEventRule;
  /**
   * How far this host's clock may run ahead of the service's before fresh events look too old.
   * Default {@link DEFAULT_CLOCK_SKEW_MS} (5 minutes). At most one hour.
   */
  clockSkewMs?: number;
  /** Bodies above this are refused with 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Bytes of request bodies the adapters read at once. A body is read only behind a signature a
   * configured key decodes, and its bytes are charged as they arrive (never its announced
   * `Content-Length`); a chunk that would pass the bound, or, once 3/4 of it is charged, a chunk of a
   * client whose other bodies hold 1/256 of it, stops its body: 503 `ERR_RECEIVER_BUSY` with `Retry-After`,
   * the connection closed. It bounds what bodies behind replayed real signatures hold in memory.
   * Default: one budget of `DEFAULT_MAX_BODY_BYTES_IN_FLIGHT` (64 MiB) shared by every receiver of
   * the process that is given none (`processBodyBudget()`). A number gives this receiver a budget of
   * its own (at least `maxBodyBytes`); a budget from `createBodyBudget` is shared by the receivers given it.
   */
  maxBodyBytesInFlight?: number | BodyBudget;
  /**
   * Longest time from a request's head to its body's last byte, when an adapter reads the body: a
   * trickled or stalled upload is answered 503 `ERR_BODY_TIMEOUT` with `Retry-After` and its
   * connection closed. Default {@link DEFAULT_BODY_TIMEOUT_MS} (5,000): the service gives up on an
   * attempt after 30 s (spec §8), and the handler may take `handlerTimeoutMs` (25 s) of them.
   */
  bodyTimeoutMs?: number;
  /**
   * Longest time from a request's head to its body's first byte, when an adapter reads the body: a
   * request that announces a body and sends none is answered 503 `ERR_BODY_TIMEOUT` with
   * `Retry-After` and its connection closed. Default {@link DEFAULT_BODY_START_TIMEOUT_MS} (2,000).
   * A deadline past `bodyTimeoutMs` is cut to it.
   */
  bodyStartTimeoutMs?: number;
  /**
   * Least average pace of a body after `bodyStartTimeoutMs`, in bytes per second: a body that has
   * not received `minBodyBytesPerSecond × (elapsed − bodyStartTimeoutMs)` bytes is answered 503
   * `ERR_BODY_TIMEOUT` with `Retry-After` and its connection closed. Default
   * {@link DEFAULT_MIN_BODY_BYTES_PER_SECOND} (16,384).
   */
  minBodyBytesPerSecond?: number;
  /** Nesting above this is refused with 400. Default 512. */
  maxDepth?: number;
  /**
   * A signed body whose canonical form may exceed this is refused with 413 `ERR_CANONICAL_TOO_LARGE`
   * before anything is serialized. Default 16 × `maxBodyBytes`.
   */
  maxCanonicalBytes?: number;
  /** After this the sender is answered 503 (so it retries) while the handler goes on. Default 25,000 (under the sender's 30 s). */
  handlerTimeoutMs?: number;
  /**
   * Handlers this receiver runs at once. A verified delivery past the bound is answered 503
   * `ERR_HANDLERS_BUSY` with `Retry-After` at once, before its claim (no lease is left behind and
   * nothing is queued): the sender retries it. A slot is held from the claim until the answer and,
   * after a `handler-timeout` answer, until the handler settles, since a handler that goes on still
   * holds what it holds (memory, a database connection). Default {@link DEFAULT_MAX_CONCURRENT_HANDLERS} (64).
   *
   * @example
   * ```ts
   * createReceiver({ publicKeys, onEvent, maxConcurrentHandlers: 10 }); // say, the size of your database pool
   * ```
   */
  maxConcurrentHandlers?: number;
  /**
   * `Retry-After` seconds on 503 answers. Default 30 (the spec's longest backoff). An in-flight answer
   * gives fewer only when the holder's lease has less than half of `leaseMs` left (the store's
   * `retryAfterMs`, rounded up): renewals stopped, so the job is free when it ends. A live holder
   * renews its lease, and the sender is told this value.
   */
  retryAfterSeconds?: number;
  /** Header names. Default the spec's `X-Service-Signature`, `X-Service-Hash-Algorithm`, `X-Service-Webhook`. */
  headerNames?: Partial<WebhookHeaderNames>;
  /**
   * Integers beyond ±(2^53−1) in events: `'string'` (default) of their exact digits, so handlers can
   * `JSON.stringify` what they get, or `'bigint'`.
   */
  bigIntegers?: BigIntegers;
  /**
   * pino-compatible logger. Default: {@link createJsonLogger} at level `warn` on stderr (handler
   * failures with their stack, store outages, setup mistakes; refusals of bad requests at most one
   * line per error code per minute). `silentLogger` logs nothing.
   */
  logger?: Logger;
  /**
   * The expected-jobs ledger (`@jobhook/core/ledger`, `createRedisLedger`, `createPostgresLedger`):
   * a job handled here, or found handled already, is settled in it (after the handler's transaction
   * commits), so the reconciler does not poll it. A failed settle is logged, never answered: the
   * reconciler's poll then finds the job done and settles it. Events for jobs the ledger does not
   * hold are handled all the same (see the README, "Never lose a result").
   */
  ledger?: Pick<JobLedger, 'settle'>;
  /** Called once per request with what happened; errors it throws are logged, not raised. */
  onOutcome?: (outcome: ReceiverOutcome) => void;
  /**
   * An OpenTelemetry `Tracer` (`trace.getTracer('jobhook')` from `@opentelemetry/api`, an optional
   * peer dependency jobhook itself never imports): a `jobhook.webhook` span per delivery with the
   * job id, outcome, statuses, profile and error code as attributes, and a `jobhook.handler` span
   * around your handlers, which run in its context, so the spans they start are its children.
   * Default: none, no spans and no cost. See `@jobhook/core/tracing` for the names.
   *
   * @example
   * ```ts
   * import { trace } from '@opentelemetry/api';
   * createReceiver({ publicKeys, onEvent, tracer: trace.getTracer('jobhook') });
   * ```
   */
  tracer?: TracerLike;
  /**
   * Opt-in: write each request refused for a signature or body cause to `dir`, as a request file
   * `jobhook doctor --request` diagnoses. The files hold customer payloads. At most `max` files
   * (default 100; the oldest are kept). Header values are kept only for the service's own headers,
   * `Content-Type`, `Content-Length`, `User-Agent`, and a signature a configured key decodes under
   * another name; every other header keeps its name, its value written `[dropped]` (proxies add
   * credentials under names nobody can list). See the README.
   */
  captureFailures?: CaptureFailuresOptions;
  /**
   * Opt-in: keep every delivery whose signature verified, byte for byte, in `dir` (the request-file
   * form of `captureFailures`, with `arrived_at` and the answer's `status`, `kind`, `code`,
   * `job_id`), to replay it (`jobhook replay`) or load it as a test fixture (`loadRecording` of
   * `@jobhook/core/testing`). The newest `max` are kept (default 1000); files are `0600` and written
   * after the answer, never making it wait on the disk. Headers as `captureFailures` keeps them: no
   * credential header's value. The files hold customer payloads and the job's live recipient tag
   * (signed, so it cannot be removed): keep `dir` private. See the README.
   *
   * @example
   * ```ts
   * createReceiver({ publicKeys, onEvent, record: { dir: process.env.JOBHOOK_RECORD_DIR! } });
   * ```
   */
  record?: RecordOptions;
}

/** Options after defaults and checks. @internal */
export interface ResolvedReceiverOptions {
  leaseMs: number;
  /** The done marks' TTL: `doneTtlMs`, raised to cover the age window. */
  doneTtlMs: number;
  /** The replay window, or `undefined` when `maxEventAgeMs: false`. */
  eventAge: EventAgeLimit | undefined;
  /** Body, depth and canonical-size limits. */
  limits: ResolvedParseOptions;
  handlerTimeoutMs: number;
  /** The bytes of bodies read at once (`maxBodyBytesInFlight`): the process's budget, or this receiver's. */
  bodyBudget: BodyBudget;
  /** Handlers run at once (`maxConcurrentHandlers`). */
  maxConcurrentHandlers: number;
  bodyTimeoutMs: number;
  bodyStartTimeoutMs: number;
  minBodyBytesPerSecond: number;
  retryAfterSeconds: number;
  headerNames: WebhookHeaderNames;
  bigIntegers: BigIntegers;
  logger: Logger;
  /** Where refused requests are written, or `undefined` (the default: nowhere). */
  captureFailures: ResolvedCaptureFailures | undefined;
  /** Where verified deliveries are recorded, or `undefined` (the default: nowhere). */
  record: ResolvedRecord | undefined;
  /** Where spans go, or `undefined` (the default: no spans). */
  tracer: TracerLike | undefined;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Default lease of a claim: 20 s. The lease only has to outlive the gap between two renewals
 * (every `leaseMs / 3`, so ~6.7 s), not the handler, so it is chosen for the other case: an instance
 * killed while holding a claim blocks that job until the lease runs out, and the sender's retries
 * must still find it free. A sender that honours our 503 `Retry-After: 30` (the reference sender
 * does; the spec only promises backoff capped at 30 s) retries ≥ 30 s later, so with 20 s the third
 * attempt after a crash takes the job (with 60 s, the first version, only the fourth and last did,
 * by under a second). Shorter would survive faster senders but give a stalled holder (Redis or the
 * event loop stuck past two renewals) less time before a second instance runs the job too.
 */
export const DEFAULT_LEASE_MS = 20_000;

/**
 * Default `handlerTimeoutMs`: 25 s, under the service's 30 s per delivery attempt (spec §8), so the
 * sender gets its 503 before it gives up on the attempt.
 */
export const DEFAULT_HANDLER_TIMEOUT_MS = 25_000;

/** Default `retryAfterSeconds`: 30, the spec's longest backoff between retries. */
export const DEFAULT_RETRY_AFTER_SECONDS = 30;

/**
 * Default `bodyTimeoutMs`: 5 s. The service gives up on a delivery attempt after 30 s (spec §8) and
 * the handler gets at most `handlerTimeoutMs` (25 s) of them before the sender is answered: a body
 * must be in within the 5 s left for that answer to reach the sender in time. A body of 1 MiB
 * needs about 200 KB/s for it, far below any link the service sends from.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

/**
 * Default `bodyStartTimeoutMs`: 2 s. The service sends a delivery's head and body in one burst from
 * a data centre; a body not started 2 s after its head is held on purpose (or its sender is so far
 * behind that the retry is the better bet). Far above the event-loop stalls of a busy receiver.
 */
export const DEFAULT_BODY_START_TIMEOUT_MS = 2_000;

/**
 * Default `minBodyBytesPerSecond`: 16 KiB/s, 32× the 500 B/s of a trickle attack and a thousandth of
 * what the service sends at. A genuine 1 MiB delivery at that pace would still be in within the
 * 5 s of `bodyTimeoutMs` only above 200 KiB/s, which is the bound that decides for large bodies.
 */
export const DEFAULT_MIN_BODY_BYTES_PER_SECOND = 16 * 1024;

/**
 * Default `maxConcurrentHandlers`: 64. The bound is there for a handler's downstream that slows or
 * hangs (each running handler holds its event, a lease renewal timer, often a database connection),
 * not to shape normal traffic: every 503 spends one of the sender's 3 retries, so it sits well above
 * what a process's database pool serves at once (pg's default pool is 10), and with the default
 * `maxBodyBytesInFlight` (64 MiB, 64 bodies of the 1 MiB limit) the events held by running handlers
 * have the same order of ceiling as the bodies being read.
 */
export const DEFAULT_MAX_CONCURRENT_HANDLERS = 64;

/**
 * Default time a handled `job_id` is remembered: 7 days, far past the replay window
 * ({@link DEFAULT_MAX_EVENT_AGE_MS}), so the retries and manual redeliveries of a handled job, and
 * late events `acceptLateEvent` admits, meet its done mark while the store keeps it.
 */
export const DEFAULT_DONE_TTL_MS = 7 * DAY_MS;

function fail(message: string): never {
  throw optionError('createReceiver', message);
}

function positiveInteger(name: string, value: number, max = Number.MAX_SAFE_INTEGER): number {
  return checkInteger('createReceiver', name, value, { min: 1, max });
}

/**
 * Applies defaults and checks the options that are not checked elsewhere; throws `ERR_OPTION_INVALID`
 * with a message naming the option.
 * @internal
 */
export function resolveReceiverOptions<Db>(options: ReceiverOptions<Db>): ResolvedReceiverOptions {
  if (typeof options !== 'object' || options === null) fail('options must be an object');
  if (options.publicKeys === undefined) fail('publicKeys is required (the service public key PEM)');
  for (const [name, h] of [
    ['onSuccess', options.onSuccess],
    ['onFail', options.onFail],
    ['onEvent', options.onEvent],
  ] as const) {
    if (h !== undefined && typeof h !== 'function') fail(`${name} must be a function`);
  }
  if (options.onEvent === undefined) {
    // An event no handler sees would still be acknowledged and marked done: it would vanish.
    const missing = (['onSuccess', 'onFail'] as const).filter((name) => options[name] === undefined);
    if (missing.length === 2) fail('no handler: give onEvent, or both onSuccess and onFail');
    const [name] = missing;
    if (name !== undefined) {
      const status = name === 'onFail' ? '"fail"' : '"success"';
      fail(
        `${status} events would be acknowledged without running anything: give ${name} or onEvent (${name}: () => {} drops them on purpose)`,
      );
    }
  }
  if (options.onOutcome !== undefined && typeof options.onOutcome !== 'function') fail('onOutcome must be a function');
  if (options.ledger !== undefined && typeof options.ledger?.settle !== 'function') fail('ledger must have settle() (a JobLedger)');
  const {
    leaseMs = DEFAULT_LEASE_MS,
    doneTtlMs = DEFAULT_DONE_TTL_MS,
    handlerTimeoutMs = DEFAULT_HANDLER_TIMEOUT_MS,
    retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS,
    clockSkewMs = DEFAULT_CLOCK_SKEW_MS,
    logger = createJsonLogger(),
  } = options;
  const maxEventAgeMs = options.maxEventAgeMs ?? DEFAULT_MAX_EVENT_AGE_MS;
  // Both become timers (the lease is renewed every leaseMs / 3), and Node fires a timer of more
  // than 2^31-1 ms after 1 ms. doneTtlMs is a store expiry, not a timer, so it may be longer.
  positiveInteger('leaseMs', leaseMs, MAX_TIMER_MS);
  positiveInteger('doneTtlMs', doneTtlMs);
  positiveInteger('handlerTimeoutMs', handlerTimeoutMs, MAX_TIMER_MS);
  positiveInteger('retryAfterSeconds', retryAfterSeconds, 3600);
  if (!Number.isSafeInteger(clockSkewMs) || clockSkewMs < 0 || clockSkewMs > 3_600_000) {
    fail(`clockSkewMs must be an integer from 0 to 3600000 (one hour), got ${String(clockSkewMs)}`);
  }
  if (maxEventAgeMs !== false) positiveInteger('maxEventAgeMs', maxEventAgeMs);
  const { acceptLateEvent } = options;
  if (acceptLateEvent !== undefined && typeof acceptLateEvent !== 'function') {
    fail('acceptLateEvent must be a function (event, context) => boolean | Promise<boolean>');
  }
  const eventAge = maxEventAgeMs === false ? undefined : { maxEventAgeMs, clockSkewMs, acceptLateEvent };
  // The lease is renewed every leaseMs / 3 while the handler runs; below 30 ms that is a busy loop.
  if (leaseMs < 30) fail(`leaseMs must be at least 30, got ${leaseMs}`);
  if (doneTtlMs < leaseMs) fail(`doneTtlMs (${doneTtlMs}) must not be shorter than leaseMs (${leaseMs})`);
  if (!isLogger(logger)) fail('logger must have debug, info, warn and error methods (pino-compatible)');
  const headerNames = resolveHeaderNames(options.headerNames, 'createReceiver');
  const bigIntegers = resolveBigIntegers(options.bigIntegers, 'createReceiver', 'string');
  const store = options.store as Partial<IdempotencyStore> | undefined;
  if (store !== undefined) {
    for (const method of ['claim', 'complete', 'release', 'extend'] as const) {
      if (typeof store[method] !== 'function') fail(`store must implement ${method}() (see IdempotencyStore)`);
    }
  }
  const limits = resolveParseOptions(options, 'createReceiver');
  // A done mark shorter than the age window would let a replay pass both checks; a longer one is harmless.
  const doneTtl =
    eventAge === undefined
      ? doneTtlMs
      : Math.min(Math.max(doneTtlMs, eventAge.maxEventAgeMs + eventAge.clockSkewMs), Number.MAX_SAFE_INTEGER);
  const captureFailures = resolveCaptureFailures(options.captureFailures, 'createReceiver');
  const record = resolveRecord(options.record, 'createReceiver');
  const { maxBodyBytesInFlight, bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS } = options;
  let bodyBudget: BodyBudget;
  if (maxBodyBytesInFlight === undefined) {
    bodyBudget = processBodyBudget();
    // Bytes are charged as they arrive, so a body larger than the whole budget could never be read.
    if (bodyBudget.capacity < limits.maxBodyBytes) {
      fail(
        `maxBodyBytes (${limits.maxBodyBytes}) is above the process's shared body budget (${bodyBudget.capacity}): give maxBodyBytesInFlight of at least maxBodyBytes`,
      );
    }
  } else {
    if (!isBodyBudget(maxBodyBytesInFlight)) positiveInteger('maxBodyBytesInFlight', maxBodyBytesInFlight as number);
    bodyBudget = isBodyBudget(maxBodyBytesInFlight) ? maxBodyBytesInFlight : createBodyBudget(maxBodyBytesInFlight);
    if (bodyBudget.capacity < limits.maxBodyBytes) {
      fail(`maxBodyBytesInFlight (${bodyBudget.capacity}) must not be less than maxBodyBytes (${limits.maxBodyBytes})`);
    }
  }
  positiveInteger('bodyTimeoutMs', bodyTimeoutMs, MAX_TIMER_MS);
  const { bodyStartTimeoutMs = DEFAULT_BODY_START_TIMEOUT_MS, minBodyBytesPerSecond = DEFAULT_MIN_BODY_BYTES_PER_SECOND } = options;
  positiveInteger('bodyStartTimeoutMs', bodyStartTimeoutMs, MAX_TIMER_MS);
  positiveInteger('minBodyBytesPerSecond', minBodyBytesPerSecond);
  const { maxConcurrentHandlers = DEFAULT_MAX_CONCURRENT_HANDLERS } = options;
  positiveInteger('maxConcurrentHandlers', maxConcurrentHandlers);
  return {
    leaseMs,
    doneTtlMs: doneTtl,
    eventAge,
    limits,
    handlerTimeoutMs,
    bodyBudget,
    maxConcurrentHandlers,
    bodyTimeoutMs,
    bodyStartTimeoutMs,
    minBodyBytesPerSecond,
    retryAfterSeconds,
    headerNames,
    bigIntegers,
    logger,
    captureFailures,
    record,
    tracer: checkTracer(options.tracer, fail),
  };
}
