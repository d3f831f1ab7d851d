import { createMemoryStore, RECEIVER_DEFAULTS, type IdempotencyStore, type Logger } from '@jobhook/core';
import {
  checkBoolean,
  checkFunction,
  checkMethods,
  checkMs,
  checkObject,
  checkStore,
  MAX_TIMER_MS,
  resolveLogger,
} from '@jobhook/core/internal';
import type { Client } from '../create-client.js';
import type { JobResult } from '../job-result.js';
import { DEFAULT_MAX_POLL_INTERVAL_MS, DEFAULT_POLL_INTERVAL_MS, DEFAULT_POLL_TIMEOUT_MS, resolvePollOptions } from './poll-options.js';

/** Options of `createResultWaiter`. */
export interface ResultWaiterOptions {
  /** The client that polls. Required. */
  client: Client;
  /**
   * Where "this job was handled" is recorded, keyed by `job_id`. Give the SAME store to the
   * receiver that calls `ResultWaiter.handleEvent` (`createReceiver({ store: waiter.store, … })`).
   * Default: a memory store (closed by `close()`); a Redis store makes it hold across processes.
   */
  store?: IdempotencyStore;
  /**
   * Runs once per job, whichever path sees the result first (webhook or poll). Throwing on the
   * webhook path answers the sender 500 (it retries); on the poll path `waitForResult` rejects with
   * the error and the claim is released, so a later delivery or wait runs it again.
   */
  onResult?: (result: JobResult) => unknown;
  /**
   * True when a receiver calls `handleEvent`: `waitForResult` then gives the webhook
   * `webhookGraceMs` before it starts polling. Default false: polling starts at once.
   */
  webhooks?: boolean;
  /** With `webhooks`, how long to wait for the webhook before polling, ms. Default 2 × `pollIntervalMs`. */
  webhookGraceMs?: number;
  /** First pause between polls, ms (grows ×1.5). Default 2,000. */
  pollIntervalMs?: number;
  /** Longest pause between polls, ms. Default 30,000. */
  maxPollIntervalMs?: number;
  /** `waitForResult` rejects with `ERR_TIMEOUT` after this long. Default 600,000 (10 min). */
  timeoutMs?: number;
  /** Lease of the poll path's claim, renewed while `onResult` runs. Default the receiver's, `RECEIVER_DEFAULTS.leaseMs` (20,000). */
  leaseMs?: number;
  /** How long a handled job is remembered in the store. Default the receiver's, `RECEIVER_DEFAULTS.doneTtlMs` (7 days). */
  doneTtlMs?: number;
  /**
   * pino-compatible logger: an error for a poll answer that does not name the job asked for, a
   * warning for one over the client's `maxAnswerBytes` (with the job id, to fetch it by hand); the
   * wait rejects with the same error. Default: JSON lines at `warn` on stderr.
   */
  logger?: Logger;
}

/** Per-call options of `ResultWaiter.waitForResult`. */
export interface WaitOptions {
  /** Overrides the waiter's `timeoutMs`. */
  timeoutMs?: number;
  /** Overrides the waiter's `webhookGraceMs` (0: poll at once, e.g. for a job submitted without webhook). */
  webhookGraceMs?: number;
  /** Stops waiting at once; the promise rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** {@link ResultWaiterOptions} checked, with defaults: every option set but `onResult`. @internal */
export interface ResolvedResultWaiterOptions extends Required<Omit<ResultWaiterOptions, 'onResult'>> {
  onResult: ResultWaiterOptions['onResult'];
  /** True when `store` was made here (a memory store), so the waiter closes it. */
  ownsStore: boolean;
}

const WHERE = 'createResultWaiter';

/**
 * Checks every option of `createResultWaiter` and applies the defaults (a memory store when none is given).
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveResultWaiterOptions(options: ResultWaiterOptions): ResolvedResultWaiterOptions {
  checkObject(WHERE, 'options', options);
  const { client, onResult, webhooks = false } = options;
  checkMethods(WHERE, 'client', client, ['pollJob'], 'required: createClient(...)');
  if (onResult !== undefined) checkFunction(WHERE, 'onResult', onResult);
  checkBoolean(WHERE, 'webhooks', webhooks);
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const maxPollIntervalMs = options.maxPollIntervalMs ?? Math.max(DEFAULT_MAX_POLL_INTERVAL_MS, pollIntervalMs);
  const timeoutMs = options.timeoutMs ?? DEFAULT_POLL_TIMEOUT_MS;
  // pollJob's checks (intervals, timeout), so both report the same messages.
  resolvePollOptions({ intervalMs: pollIntervalMs, maxIntervalMs: maxPollIntervalMs, timeoutMs }, WHERE);
  const webhookGraceMs = options.webhookGraceMs ?? 2 * pollIntervalMs;
  checkMs(WHERE, 'webhookGraceMs', webhookGraceMs, { min: 0, max: MAX_TIMER_MS });
  const { leaseMs = RECEIVER_DEFAULTS.leaseMs, doneTtlMs = RECEIVER_DEFAULTS.doneTtlMs } = options;
  checkMs(WHERE, 'leaseMs', leaseMs, { max: MAX_TIMER_MS });
  checkMs(WHERE, 'doneTtlMs', doneTtlMs);
  const store = options.store ?? createMemoryStore();
  checkStore(WHERE, store);
  const logger = resolveLogger(WHERE, options.logger);
  return {
    client,
    store,
    ownsStore: options.store === undefined,
    onResult,
    webhooks,
    webhookGraceMs,
    pollIntervalMs,
    maxPollIntervalMs,
    timeoutMs,
    leaseMs,
    doneTtlMs,
    logger,
  };
}

/** {@link WaitOptions} checked, the waiter's settings filling what is not given. @internal */
export interface ResolvedWaitOptions {
  timeoutMs: number;
  webhookGraceMs: number;
  signal: AbortSignal | undefined;
}

/**
 * Checks the options of one `waitForResult` call; `defaults` are the waiter's (`webhookGraceMs` 0
 * without `webhooks`: polling starts at once).
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveWaitOptions(options: WaitOptions, defaults: { timeoutMs: number; webhookGraceMs: number }): ResolvedWaitOptions {
  const timeoutMs = checkMs('waitForResult', 'timeoutMs', options.timeoutMs ?? defaults.timeoutMs, { max: MAX_TIMER_MS });
  const webhookGraceMs = checkMs('waitForResult', 'webhookGraceMs', options.webhookGraceMs ?? defaults.webhookGraceMs, {
    min: 0,
    max: MAX_TIMER_MS,
  });
  return { timeoutMs, webhookGraceMs, signal: options.signal };
}
