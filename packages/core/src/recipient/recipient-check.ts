import { JobhookError, type ErrorCode } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import { RECIPIENT_TAG_KEY, checkRecipientTag, TagMacKey, type RecipientTagCause, type RecipientTagCheck } from './recipient-tag.js';
import { DEFAULT_CLOCK_SKEW_MS } from '../events/clock-skew.js';
import { createJsonLogger, type Logger } from '../log/logger.js';
import { resolveRecipientOptions, type RecipientOptions } from './recipient-option-checks.js';
import { createRejectionLogLimit } from '../log/rejection-log-limit.js';

/** The event to hand on (the tag deleted from it in place: it must be this call's own parse), or the refusal. @internal */
export type RecipientChecker = (event: AsyncJobCompletedEvent, now: number) => AsyncJobCompletedEvent | JobhookError;

/**
 * The receiver's check: a {@link RecipientChecker} that also binds a valid tag's nonce to `jobId`
 * (the event's lower-case `job_id`). A promise only when the store's binding is one; it rejects
 * with the store's error (`ERR_STORE_UNAVAILABLE`) when the binding could not be made.
 * @internal
 */
export type RecipientBindingCheck = (
  event: AsyncJobCompletedEvent,
  now: number,
  jobId: string,
) => AsyncJobCompletedEvent | JobhookError | Promise<AsyncJobCompletedEvent | JobhookError>;

/**
 * Binds a valid tag's nonce to a job (the lower-case `job_id`) for `ttlMs`: true when the nonce is
 * that job's (bound now, or before), false when another job's. In this turn when the store answers in
 * it, else a promise that rejects with the store's error. The receiver's (receiver/nonce-binder.ts).
 * @internal
 */
export type NonceBinder = (nonce: string, jobId: string, ttlMs: number) => boolean | Promise<boolean>;

/** The receiver's recipient check and binding, webhook and poll. @internal */
export interface RecipientBinding {
  /** Webhooks. */
  readonly check: RecipientBindingCheck;
  /**
   * Polls: binds the nonce of a valid tag in `userParameters` (the poll answer's, as it came: the
   * event handed on has the tag dropped) to the polled job, so that a copy on another job is refused
   * later; in this turn when the store allows (`undefined`). A nonce bound to another job already is
   * logged (`ERR_RECIPIENT_TAG_REUSED`), and the job handled: the poll asked the service for this job
   * by its id, with the app's key. Changes nothing.
   */
  readonly bindPolled: (userParameters: unknown, now: number, jobId: string) => undefined | Promise<void>;
}

const CODE_OF_CAUSE: Record<RecipientTagCause, ErrorCode> = {
  missing: 'ERR_RECIPIENT_TAG_MISSING',
  malformed: 'ERR_RECIPIENT_TAG_INVALID',
  mac: 'ERR_RECIPIENT_TAG_INVALID',
  url: 'ERR_RECIPIENT_TAG_INVALID',
  future: 'ERR_RECIPIENT_TAG_INVALID',
  expired: 'ERR_RECIPIENT_TAG_EXPIRED',
  reused: 'ERR_RECIPIENT_TAG_REUSED',
};

const MESSAGE_OF_CAUSE: Record<RecipientTagCause, string> = {
  missing: `the job carries no recipient tag (user_parameters.${RECIPIENT_TAG_KEY}): it was not submitted for this receiver`,
  malformed: 'the recipient tag is malformed',
  mac: 'the recipient tag was not made with this receiver’s secret',
  url: 'the recipient tag was made for another webhook URL',
  future: 'the recipient tag was issued in the future',
  expired: 'the recipient tag has expired',
  reused: 'the recipient tag was carried by another job first (copied onto this one)',
};

/** Rate limits of the rollout mode's warnings, per logger, so `constructEvent` calls share one. */
const logLimits = new WeakMap<Logger, (cause: string) => number | undefined>();
// Process-wide on purpose: the rollout warning's rate limit must hold across every constructEvent call, which has no instance.
let defaultLogger: Logger | undefined;

/**
 * Checks the recipient options and returns the check, or `undefined` without `recipientSecret`.
 * `logger` is where the rollout mode warns (default the JSON logger at `warn` on stderr). With
 * `makeBinder` (the receiver's; called once the options are checked and a secret given), each valid tag's nonce is bound to its job for `recipientTagMaxAgeMs` +
 * 2 × `clockSkewMs` (a tag from up to `clockSkewMs` ahead stays valid that long), and a nonce bound
 * to another job is refused (`reused`).
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function createRecipientCheck(
  options: RecipientOptions,
  owner: string,
  logger?: Logger,
  clockSkewMs?: number,
): RecipientChecker | undefined;
export function createRecipientCheck(
  options: RecipientOptions,
  owner: string,
  logger: Logger,
  clockSkewMs: number | undefined,
  makeBinder: () => NonceBinder,
): RecipientBinding | undefined;
export function createRecipientCheck(
  options: RecipientOptions,
  owner: string,
  logger?: Logger,
  clockSkewMs: number = DEFAULT_CLOCK_SKEW_MS,
  makeBinder?: () => NonceBinder,
): RecipientBindingCheck | RecipientBinding | undefined {
  // Without a logger, the one default of the process: the rate limit is per logger, and must hold
  // across constructEvent calls, each of which resolves its options anew.
  const resolved = resolveRecipientOptions(options, owner, logger === undefined ? (defaultLogger ??= createJsonLogger()) : logger);
  if (resolved === undefined) return undefined;
  const { secrets, maxAgeMs, urlHashes, log } = resolved;
  // Reused by each call (they run to the end in one turn), `now` set first.
  const check: RecipientTagCheck = {
    secrets,
    macKeys: secrets.map((secret) => new TagMacKey(secret)),
    maxAgeMs,
    clockSkewMs,
    now: 0,
    ...(urlHashes === undefined ? {} : { urlHashes }),
  };
  let allowed: ((cause: string) => number | undefined) | undefined;
  if (log !== undefined) {
    allowed = logLimits.get(log);
    if (allowed === undefined) logLimits.set(log, (allowed = createRejectionLogLimit()));
  }
  const bind = makeBinder?.();
  const bindingMs = maxAgeMs + 2 * clockSkewMs;

  /** The refusal of `cause` ('enforce'), or the event without its tag once the cause is logged ('log': handled anyway). */
  function refusal(event: AsyncJobCompletedEvent, jobId: string, cause: RecipientTagCause, nonce?: string, issuedAt?: number) {
    const code = CODE_OF_CAUSE[cause];
    const message = `${MESSAGE_OF_CAUSE[cause]} (${cause})`;
    const detail = { cause, ...(nonce === undefined ? {} : { nonce, issuedAt }) };
    if (log === undefined || allowed === undefined) return new JobhookError(code, message, { detail });
    const suppressed = allowed(cause);
    if (suppressed !== undefined) {
      log.warn(
        { code, ...detail, jobId, ...(suppressed > 0 ? { suppressed } : {}) },
        `jobhook: ${message}; handled anyway (recipientCheck: 'log'); one line per cause per minute`,
      );
    }
    return withoutTag(event);
  }

  function afterBinding(event: AsyncJobCompletedEvent, jobId: string, ours: boolean, nonce: string, issuedAt: number) {
    return ours ? withoutTag(event) : refusal(event, jobId, 'reused', nonce, issuedAt);
  }

  /** The check of the tag in `params` (an event's `user_parameters`). */
  function checkTag(params: unknown, now: number) {
    const tag =
      typeof params !== 'object' || params === null || !Object.hasOwn(params, RECIPIENT_TAG_KEY)
        ? undefined
        : (params as Record<string, unknown>)[RECIPIENT_TAG_KEY];
    check.now = now;
    return checkRecipientTag(tag, check);
  }

  const checkEvent: RecipientBindingCheck = (event, now, jobId = event.job_id.toLowerCase()) => {
    const result = checkTag(event.user_parameters, now);
    if (!result.ok) return refusal(event, jobId, result.cause, result.nonce, result.issuedAt);
    if (bind === undefined) return withoutTag(event);
    // One tag, one job: the nonce goes to the first job that carries it; a redelivery finds its own.
    const { nonce, issuedAt } = result;
    const ours = bind(nonce, jobId, bindingMs);
    if (typeof ours === 'boolean') return afterBinding(event, jobId, ours, nonce, issuedAt);
    return ours.then((mine) => afterBinding(event, jobId, mine, nonce, issuedAt));
  };
  if (bind === undefined) return checkEvent;

  const warnReused = (ours: boolean, jobId: string, nonce: string): undefined => {
    if (ours) return undefined;
    (logger ?? (defaultLogger ??= createJsonLogger())).warn(
      { code: CODE_OF_CAUSE.reused, cause: 'reused', nonce, jobId },
      `jobhook: the polled job's recipient tag was carried by another job first (copied); the job is handled (the poll asked for it by id)`,
    );
    return undefined;
  };
  return Object.freeze({
    check: checkEvent,
    bindPolled(userParameters: unknown, now: number, jobId: string): undefined | Promise<void> {
      const result = checkTag(userParameters, now);
      if (!result.ok) return undefined;
      const { nonce } = result;
      const ours = bind(nonce, jobId, bindingMs);
      if (typeof ours === 'boolean') return warnReused(ours, jobId, nonce);
      return ours.then((mine) => warnReused(mine, jobId, nonce));
    },
  });
}

/**
 * The event without the tag: `user_parameters` is the submitter's own object, absent when the tag
 * was its only member. The event is this delivery's own parse (the receiver's and `constructEvent`'s
 * payload, built for this call and seen by nobody yet), so the tag is deleted in place: copying the
 * members cost 2 µs per delivery, a quarter of the recipient check. `Object.hasOwn` and `delete`
 * touch own members only (a `__proto__` key stays a key). The poll paths use it too.
 * @internal
 */
export function withoutTag(event: AsyncJobCompletedEvent): AsyncJobCompletedEvent {
  const params = event.user_parameters;
  if (params === undefined || !Object.hasOwn(params, RECIPIENT_TAG_KEY)) return event;
  delete (params as Record<string, unknown>)[RECIPIENT_TAG_KEY];
  // The first member left ends the search: no need to count them.
  for (const key in params) if (Object.hasOwn(params, key)) return event;
  delete (event as { user_parameters?: unknown }).user_parameters;
  return event;
}
