import type { CanonicalProfile } from '../canonical/profiles.js';
import type { AsyncJobCompletedEvent, FailEvent, SuccessEvent } from '../events/async-job-event.js';
import type { KeyRing, PublicKeyInput } from '../keys/key-ring.js';
import type { BigIntegers, LosslessJsonValue } from '../canonical/to-value.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import type { CaptureFailuresOptions, RecordOptions } from '../diagnosis/diagnosis-option-checks.js';
import type { IdempotencyStore, TransactionalStore } from '../store/idempotency-store.js';
import type { JobLedger } from '../ledger/job-ledger.js';
import type { LateEventRule } from './event-age.js';
import type { Logger } from '../log/logger.js';
import type { ReceiverOutcome } from './receiver-outcome.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { RecipientOptions } from '../recipient/recipient-option-checks.js';
import type { BodyBudget } from './body-budget.js';
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
