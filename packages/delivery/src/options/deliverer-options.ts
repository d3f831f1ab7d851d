import type { KeyObject } from 'node:crypto';
import { type JobhookError, RECEIVER_DEFAULTS, type Logger, type WebhookHeaderNames } from '@jobhook/core';
import { loadPrivateKey, signPayloadAsync, type BodyStyle, type SignedPayload, type SignOptions } from '@jobhook/core/sign';
import { checkFunction, checkInteger, isBodyStyle, isHeaderName, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';
import type { DeliveryLog, DeliverySubject } from '../delivery-log.js';
import type { RetryPolicy } from '../retry-policy.js';
import type { SsrfGuard } from '../ssrf-guard.js';
import { DEFAULT_USER_AGENT } from '../user-agent.js';
import { checkLogger } from '@jobhook/core/internal';

/** How the deliverer signs a payload: core's `signPayloadAsync` (canonical bytes here, RSA on the thread pool). */
export type PayloadSigner = (payload: Buffer, privateKey: KeyObject, options: SignOptions) => Promise<SignedPayload>;

/** Options of `createDeliverer`; `J` is the job record of the service's store. */
export interface DelivererOptions<J extends DeliverySubject = DeliverySubject> {
  /** Where jobs are read and their attempts written: the service's job store. */
  jobs: DeliveryLog<J>;
  /**
   * The exact JSON text of a final job's webhook payload (the service's format). Called once per
   * job and process (the signed bytes are then kept), so the payload of a job must not change.
   */
  payload: (job: J) => string;
  /** The service's signing key, from `loadPrivateKey`. */
  privateKey: KeyObject;
  policy: RetryPolicy;
  guard: SsrfGuard;
  /** One deadline for DNS, connect, TLS, sending and the answer's headers; 1 to 2^31-1. Default 30000 (spec §6.4). */
  attemptTimeoutMs?: number;
  /** Body layout. Default `python` (`json.dumps` defaults, as Python HTTP clients send JSON). */
  bodyStyle?: BodyStyle;
  /** Default the spec's `X-Service-*`. */
  headerNames?: Partial<WebhookHeaderNames>;
  /** Default `jobhook-sender/<version>`. */
  userAgent?: string;
  /** Clock in ms. Default `Date.now`. */
  now?: () => number;
  /** pino-compatible. Default silent. */
  logger?: Logger;
  /** Extra CA certificates (PEM) trusted for `https:` receivers, e.g. a private CA. Default Node's. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /**
   * A payload whose canonical form may exceed this many bytes is not signed nor sent (attempt
   * `rejected`, error `payload_invalid`): receivers refuse it (413) by the same bound. Default
   * 16 MiB, the receivers' default (`RECEIVER_DEFAULTS.maxCanonicalBytes`).
   */
  maxCanonicalBytes?: number;
  /** Most jobs whose signed webhook is kept in memory for their next attempts and rounds. Default 10000. */
  signedCacheEntries?: number;
  /** Most bytes of signed webhooks kept in memory. Default 64 MiB. */
  signedCacheBytes?: number;
  /** Signs a payload. Default core's `signPayloadAsync`; given to wrap or count signing (tests). */
  sign?: PayloadSigner;
}

/** {@link DelivererOptions} checked, with defaults. @internal */
export interface ResolvedDelivererOptions<J extends DeliverySubject> {
  jobs: DeliveryLog<J>;
  payload: (job: J) => string;
  privateKey: KeyObject;
  policy: RetryPolicy;
  guard: SsrfGuard;
  attemptTimeoutMs: number;
  bodyStyle: BodyStyle;
  headerNames: Partial<WebhookHeaderNames>;
  userAgent: string;
  now: () => number;
  logger?: Logger;
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  maxCanonicalBytes: number;
  signedCacheEntries: number;
  signedCacheBytes: number;
  sign: PayloadSigner;
}

/** Default `maxCanonicalBytes` of the deliverer: the receivers' default, 16 × 1 MiB. */
export const DEFAULT_MAX_CANONICAL_BYTES = RECEIVER_DEFAULTS.maxCanonicalBytes;
/** Default `signedCacheEntries`. */
export const DEFAULT_SIGNED_CACHE_ENTRIES = 10_000;
/** Default `signedCacheBytes`: 64 MiB. */
export const DEFAULT_SIGNED_CACHE_BYTES = 64 * 1024 * 1024;

const OWNER = 'createDeliverer';

function invalid(what: string): JobhookError {
  return optionError(OWNER, what);
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  return typeof value === 'object' && value !== null && names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');
}

/**
 * Checks every option of `createDeliverer` once, at construction, and applies the defaults; the
 * private key is loaded here too (`ERR_KEY_INVALID` when unusable).
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveDelivererOptions<J extends DeliverySubject>(options: DelivererOptions<J>): ResolvedDelivererOptions<J> {
  if (typeof options !== 'object' || options === null) throw invalid('options are required');
  const {
    jobs,
    payload,
    policy,
    guard,
    attemptTimeoutMs = 30_000,
    bodyStyle = 'python',
    headerNames = {},
    userAgent = DEFAULT_USER_AGENT,
    now = Date.now,
    logger,
  } = options;
  if (!hasMethods(jobs, ['get', 'appendAttempt', 'endRound'])) throw invalid('jobs must be a DeliveryLog (get, appendAttempt, endRound)');
  checkFunction(OWNER, 'payload', payload, 'a function (job) => JSON text');
  if (!hasMethods(policy, ['nextDelayMs']) || !Number.isSafeInteger(policy.maxAttempts))
    throw invalid('policy must be a RetryPolicy (createRetryPolicy)');
  if (!hasMethods(guard, ['checkUrl', 'resolveTarget'])) throw invalid('guard must be an SsrfGuard (createSsrfGuard)');
  // A timer: setTimeout fires at once beyond 2^31-1 ms, which would time every attempt out.
  checkInteger(OWNER, 'attemptTimeoutMs', attemptTimeoutMs, { min: 1, max: MAX_TIMER_MS });
  if (!isBodyStyle(bodyStyle)) {
    throw invalid(`bodyStyle must be python, canonical or compact, got ${JSON.stringify(bodyStyle)}`);
  }
  for (const [key, name] of Object.entries(headerNames)) {
    if (!isHeaderName(name)) throw invalid(`headerNames.${key} must be an HTTP header name`);
  }
  // A header value with CR/LF would let the configuration inject headers.
  if (typeof userAgent !== 'string' || userAgent === '' || /[\u0000-\u001f\u007f]/.test(userAgent)) {
    throw invalid('userAgent must be a non-empty string without control characters');
  }
  checkFunction(OWNER, 'now', now, 'a function returning ms');
  if (logger !== undefined) checkLogger(OWNER, logger);
  const { ca } = options;
  const isPem = (v: unknown): boolean => typeof v === 'string' || Buffer.isBuffer(v);
  if (ca !== undefined && !isPem(ca) && !(Array.isArray(ca) && ca.every(isPem)))
    throw invalid('ca must be PEM text, a Buffer, or an array of them');
  const {
    maxCanonicalBytes = DEFAULT_MAX_CANONICAL_BYTES,
    signedCacheEntries = DEFAULT_SIGNED_CACHE_ENTRIES,
    signedCacheBytes = DEFAULT_SIGNED_CACHE_BYTES,
    sign = signPayloadAsync,
  } = options;
  checkInteger(OWNER, 'maxCanonicalBytes', maxCanonicalBytes, { min: 2 });
  checkInteger(OWNER, 'signedCacheEntries', signedCacheEntries, { min: 1 });
  checkInteger(OWNER, 'signedCacheBytes', signedCacheBytes, { min: 1 });
  checkFunction(OWNER, 'sign', sign, 'a function (payload, privateKey, options) => Promise<SignedPayload>');
  const privateKey = loadPrivateKey(options.privateKey);
  return {
    jobs,
    payload,
    privateKey,
    policy,
    guard,
    attemptTimeoutMs,
    bodyStyle,
    headerNames,
    userAgent,
    now,
    ...(logger === undefined ? {} : { logger }),
    ...(ca === undefined ? {} : { ca }),
    maxCanonicalBytes,
    signedCacheEntries,
    signedCacheBytes,
    sign,
  };
}
