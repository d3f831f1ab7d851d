import { checkFunction, checkInteger, checkMethods, checkObject, MAX_TIMER_MS, optionError } from '../internal/option-checks.js';
import { resolveBigIntegers, resolveParseOptions, type ResolvedParseOptions } from '../canonical/canonical-option-checks.js';
import type { BigIntegers } from '../canonical/to-value.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { resolveHeaderNames } from '../signature/signature-option-checks.js';
import {
  resolveCaptureFailures,
  resolveRecord,
  type ResolvedCaptureFailures,
  type ResolvedRecord,
} from '../diagnosis/diagnosis-option-checks.js';
import { checkStore } from '../store/store-option-checks.js';
import { DEFAULT_CLOCK_SKEW_MS, DEFAULT_MAX_EVENT_AGE_MS, type EventAgeLimit } from './event-age.js';
import { resolveLogger } from '../log/log-option-checks.js';
import type { Logger } from '../log/logger.js';
import { createBodyBudget, isBodyBudget, processBodyBudget, type BodyBudget } from './body-budget.js';
import type { TracerLike } from '../tracing/tracer-like.js';
import type { ReceiverOptions } from './receiver-options.js';
import {
  DEFAULT_BODY_START_TIMEOUT_MS,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_DONE_TTL_MS,
  DEFAULT_HANDLER_TIMEOUT_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_CONCURRENT_HANDLERS,
  DEFAULT_MIN_BODY_BYTES_PER_SECOND,
  DEFAULT_RETRY_AFTER_SECONDS,
} from './receiver-defaults.js';

// Every option of createReceiver is checked here, once, at construction: the receive stages read
// the resolved values and check nothing. The options of other rooms (body limits, header names,
// capture and record) are checked by those rooms' own option checks, called from here; the recipient
// options by createRecipientCheck (recipient-option-checks.ts), which constructEvent shares.

const WHERE = 'createReceiver';

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

function fail(message: string): never {
  throw optionError(WHERE, message);
}

function positiveInteger(name: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number {
  return checkInteger(WHERE, name, value, { min: 1, max });
}

function optionalFunction(name: string, value: unknown, what?: string): void {
  if (value !== undefined) checkFunction(WHERE, name, value, what);
}

/** Every event must reach a handler: one no handler sees would still be acknowledged and marked done. */
function checkHandlers(options: ReceiverOptions<unknown>): void {
  optionalFunction('onSuccess', options.onSuccess);
  optionalFunction('onFail', options.onFail);
  optionalFunction('onEvent', options.onEvent);
  if (options.onEvent !== undefined) return;
  const missing = (['onSuccess', 'onFail'] as const).filter((name) => options[name] === undefined);
  if (missing.length === 2) fail('no handler: give onEvent, or both onSuccess and onFail');
  const [name] = missing;
  if (name === undefined) return;
  const status = name === 'onFail' ? '"fail"' : '"success"';
  fail(
    `${status} events would be acknowledged without running anything: give ${name} or onEvent (${name}: () => {} drops them on purpose)`,
  );
}

/** The replay window, or `undefined` when `maxEventAgeMs: false`. */
function resolveEventAge(options: ReceiverOptions<unknown>): EventAgeLimit | undefined {
  const { clockSkewMs = DEFAULT_CLOCK_SKEW_MS, acceptLateEvent } = options;
  const maxEventAgeMs = options.maxEventAgeMs ?? DEFAULT_MAX_EVENT_AGE_MS;
  checkInteger(WHERE, 'clockSkewMs', clockSkewMs, { min: 0, max: 3_600_000 });
  optionalFunction('acceptLateEvent', acceptLateEvent, 'a function (event, context) => boolean | Promise<boolean>');
  if (maxEventAgeMs === false) return undefined;
  positiveInteger('maxEventAgeMs', maxEventAgeMs);
  return { maxEventAgeMs, clockSkewMs, acceptLateEvent };
}

/** Bytes are charged as they arrive, so a body larger than the whole budget could never be read. */
function resolveBodyBudget(value: number | BodyBudget | undefined, maxBodyBytes: number): BodyBudget {
  if (value === undefined) {
    const shared = processBodyBudget();
    if (shared.capacity < maxBodyBytes) {
      fail(
        `maxBodyBytes (${maxBodyBytes}) is above the process's shared body budget (${shared.capacity}): give maxBodyBytesInFlight of at least maxBodyBytes`,
      );
    }
    return shared;
  }
  const budget = isBodyBudget(value) ? value : createBodyBudget(positiveInteger('maxBodyBytesInFlight', value));
  if (budget.capacity < maxBodyBytes) {
    fail(`maxBodyBytesInFlight (${budget.capacity}) must not be less than maxBodyBytes (${maxBodyBytes})`);
  }
  return budget;
}

/**
 * Applies defaults and checks every option; throws `ERR_OPTION_INVALID` with a message naming the option.
 * @internal
 */
export function resolveReceiverOptions<Db>(options: ReceiverOptions<Db>): ResolvedReceiverOptions {
  checkObject(WHERE, 'options', options);
  if (options.publicKeys === undefined) fail('publicKeys is required (the service public key PEM)');
  checkHandlers(options as ReceiverOptions<unknown>);
  optionalFunction('onOutcome', options.onOutcome);
  if (options.ledger !== undefined) checkMethods(WHERE, 'ledger', options.ledger, ['settle'], 'a JobLedger');
  if (options.store !== undefined) {
    checkStore(WHERE, options.store);
  }
  const {
    leaseMs = DEFAULT_LEASE_MS,
    doneTtlMs = DEFAULT_DONE_TTL_MS,
    handlerTimeoutMs = DEFAULT_HANDLER_TIMEOUT_MS,
    retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS,
    bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS,
    bodyStartTimeoutMs = DEFAULT_BODY_START_TIMEOUT_MS,
    minBodyBytesPerSecond = DEFAULT_MIN_BODY_BYTES_PER_SECOND,
    maxConcurrentHandlers = DEFAULT_MAX_CONCURRENT_HANDLERS,
  } = options;
  // These become timers (the lease is renewed every leaseMs / 3), and Node fires a timer of more
  // than 2^31-1 ms after 1 ms. doneTtlMs is a store expiry, not a timer, so it may be longer.
  // Below 30 ms a lease's renewals would be a busy loop.
  checkInteger(WHERE, 'leaseMs', leaseMs, { min: 30, max: MAX_TIMER_MS });
  positiveInteger('doneTtlMs', doneTtlMs);
  if (doneTtlMs < leaseMs) fail(`doneTtlMs (${doneTtlMs}) must not be shorter than leaseMs (${leaseMs})`);
  positiveInteger('handlerTimeoutMs', handlerTimeoutMs, MAX_TIMER_MS);
  positiveInteger('retryAfterSeconds', retryAfterSeconds, 3600);
  positiveInteger('bodyTimeoutMs', bodyTimeoutMs, MAX_TIMER_MS);
  positiveInteger('bodyStartTimeoutMs', bodyStartTimeoutMs, MAX_TIMER_MS);
  positiveInteger('minBodyBytesPerSecond', minBodyBytesPerSecond);
  positiveInteger('maxConcurrentHandlers', maxConcurrentHandlers);
  const eventAge = resolveEventAge(options as ReceiverOptions<unknown>);
  const limits = resolveParseOptions(options, WHERE);
  // A done mark shorter than the age window would let a replay pass both checks; a longer one is harmless.
  const doneTtl =
    eventAge === undefined
      ? doneTtlMs
      : Math.min(Math.max(doneTtlMs, eventAge.maxEventAgeMs + eventAge.clockSkewMs), Number.MAX_SAFE_INTEGER);
  return {
    leaseMs,
    doneTtlMs: doneTtl,
    eventAge,
    limits,
    handlerTimeoutMs,
    bodyBudget: resolveBodyBudget(options.maxBodyBytesInFlight, limits.maxBodyBytes),
    maxConcurrentHandlers,
    bodyTimeoutMs,
    bodyStartTimeoutMs,
    minBodyBytesPerSecond,
    retryAfterSeconds,
    headerNames: resolveHeaderNames(options.headerNames, WHERE),
    bigIntegers: resolveBigIntegers(options.bigIntegers, WHERE, 'string'),
    logger: resolveLogger(WHERE, options.logger),
    captureFailures: resolveCaptureFailures(options.captureFailures, WHERE),
    record: resolveRecord(options.record, WHERE),
    tracer:
      options.tracer === undefined
        ? undefined
        : checkMethods<TracerLike>(
            WHERE,
            'tracer',
            options.tracer,
            ['startActiveSpan'],
            "an OpenTelemetry Tracer: trace.getTracer('jobhook')",
          ),
  };
}
