import ipaddr from 'ipaddr.js';
import { silentLogger, type Logger, type WebhookHeaderNames } from '@jobhook/core';
import type { BodyStyle, PrivateKeyInput } from '@jobhook/core/sign';
import {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkRedisUrl,
  isBodyStyle,
  isHeaderName,
  checkLogger,
  MAX_TIMER_MS,
  optionError,
} from '@jobhook/core/internal';
import { DEFAULT_MAX_CANONICAL_BYTES, type HostResolver } from '@jobhook/delivery';
import type { AccountsConfig } from '../accounts/accounts-config.js';
import { tokenProblem } from '../accounts/api-token.js';
import { DEFAULT_HTTP_TIMEOUTS, type HttpTimeouts } from '../api/http-timeouts.js';
import { DEFAULT_MAX_REDELIVERIES, DEFAULT_REDELIVER_COOLDOWN_MS } from './job-service-options.js';
import { DEFAULT_MAX_STORED_JOB_BYTES, DEFAULT_MAX_STORED_JOBS, DEFAULT_STORED_JOB_TTL_MS } from './memory-job-store-options.js';

/** Smallest `maxCanonicalBytes`: a payload's fixed members alone take a few hundred bytes. */
export const MIN_MAX_CANONICAL_BYTES = 1024;

/**
 * Options of `createSender`. Every option is checked at construction; a wrong one throws
 * `ERR_OPTION_INVALID` with a message naming it.
 */
export interface SenderOptions {
  /**
   * Organizations, members and keys (`loadAccountsConfig`). Default: from `stateDir`, else two dev
   * organizations with generated keys (`sender.devKeys`).
   */
  accounts?: AccountsConfig;
  /** Extra inference tokens (the CLI's `--api-key`), added to the first organization with 1000 credits. */
  apiKeys?: readonly string[];
  /** The webhook signing key (PEM or KeyObject, RSA ≥ 2048 bits). Default: from `stateDir`, else an RSA-3072 key generated at start. */
  privateKey?: PrivateKeyInput;
  /**
   * A folder that keeps the signing key (`signing-key.pem`) and the dev accounts (`accounts.json`)
   * from one start to the next, so receivers and clients keep working across restarts: read when
   * there, else generated and written (files 0600, written atomically; the folder created 0700 with a
   * `.gitignore` of `*`). `privateKey` and `accounts`, when given, take precedence and are not
   * written. Default none: a new key and new dev tokens per start.
   */
  stateDir?: string;
  /**
   * Also write the public key (SPKI PEM, what receivers verify with) to this file at start, replacing
   * it atomically (mode 0644). Default none (`sender.publicKeyPem` holds it).
   */
  publicKeyFile?: string;
  /** `redis://` URL: jobs and credits in Redis and work in BullMQ, shared by every sender on that Redis. Default: memory. */
  redisUrl?: string;
  /** Prefix of the Redis keys (`<prefix>:sender:` for jobs and credits, `<prefix>` for BullMQ). Default `jobhook`. */
  redisPrefix?: string;
  /** Webhook body layout (the signature always covers the canonical form). Default `python`. */
  bodyStyle?: BodyStyle;
  /** Webhook header names. Default the spec's `X-Service-*`. */
  headerNames?: Partial<WebhookHeaderNames>;
  /** Webhook `User-Agent`. Default `jobhook-sender/<version>`. */
  userAgent?: string;
  /** Deadline of one delivery attempt. Default 30000 (spec §6.4). */
  attemptTimeoutMs?: number;
  /** Backoff before the first retry (then doubled, with jitter). Default 1000. */
  retryBaseMs?: number;
  /** Retries after the first attempt. Default 3 (spec §8). */
  maxRetries?: number;
  /** Longest delay between attempts. Default 30000 (spec §8). */
  maxRetryDelayMs?: number;
  /** Accept `http://` receivers. Default false. */
  allowInsecureReceivers?: boolean;
  /** Accept receivers on any non-public address. Default false. */
  allowPrivateReceivers?: boolean;
  /** CIDRs accepted although non-public, e.g. `['127.0.0.0/8']`. Default none. */
  receiverAllowlist?: readonly string[];
  /** Serve the web page (jobs, attempts, payloads, redeliver) at `/dashboard/` (and `/` redirecting there). Default true. */
  dashboard?: boolean;
  /**
   * An `http://` or `https://` URL the page's test-job form starts with as its receiver (the demo
   * passes its receiver's). Anyone who can load the page sees it. Default none: the field starts empty.
   */
  dashboardReceiver?: string;
  /** DNS resolution of receiver hosts. Default `dns.promises.lookup(host, { all: true })`. */
  resolveHost?: HostResolver;
  /** Delivery attempts running at once. Default 16. */
  deliveryConcurrency?: number;
  /** Simulated processing time of a job without `input.simulate.delay_ms`. Default 100. */
  jobDelayMs?: number;
  /**
   * With `redisUrl`: the lock on a queued task a sender is running (BullMQ's `lockDuration`,
   * renewed while the task runs). When a sender dies mid-task, another sender (or its restart)
   * takes the task over within about this long. Default 30000.
   */
  queueLockMs?: number;
  /**
   * Largest canonical size of a job's webhook payload: a submission whose payload may exceed it is
   * refused (413, naming the field) before it is charged, and the deliverer never signs a larger
   * one. Default 16 MiB, what receivers accept by default (`maxCanonicalBytes` = 16 × their 1 MiB
   * `maxBodyBytes`); lower it to match receivers configured lower.
   */
  maxCanonicalBytes?: number;
  /** Shortest time between two redelivers of one job (429 with `Retry-After` meanwhile); 0 for none. Default 10000. */
  redeliverCooldownMs?: number;
  /** Most redeliveries of one job (then 409). Default 20. */
  maxRedeliveries?: number;
  /**
   * Without `redisUrl`: most jobs kept in memory. Unfinished ones (processing, or a delivery
   * pending) are never dropped; when they alone reach this, a submission gets 503 (`ERR_STORE_FULL`).
   * Finished ones are dropped least recently used first (then 404, as an unknown job). Default 10000.
   */
  maxStoredJobs?: number;
  /** Without `redisUrl`: most bytes of jobs and delivery logs kept in memory (estimated), the same rules. Default 256 MiB. */
  maxStoredJobBytes?: number;
  /** Without `redisUrl`: a finished job (no delivery pending) is forgotten this long after it finished (then 404). 1 to 2^31-1; default 24 h. */
  storedJobTtlMs?: number;
  /**
   * The HTTP server: a request's line, headers and body must all arrive within this, else 408 and
   * the connection is closed (a body trickled a byte at a time cannot hold a connection). 100 to
   * 600000; default 30000.
   */
  requestTimeoutMs?: number;
  /** The HTTP server: the request line and headers must arrive within this. 100 to `requestTimeoutMs`; default 10000. */
  headersTimeoutMs?: number;
  /** The HTTP server: an idle keep-alive connection is closed after this. 1 to 600000; default 5000. */
  keepAliveTimeoutMs?: number;
  /** The HTTP server: a connection without traffic either way for this long is closed. 100 to 600000; default 60000. */
  connectionTimeoutMs?: number;
  /** Randomness of generated dev tokens and retry jitter, in [0, 1). Default: crypto tokens, `Math.random` jitter. */
  random?: () => number;
  /** Clock of `created_at`, `finished_at`, key expiry and attempt records. Default `() => new Date()`. */
  now?: () => Date;
  /** pino-compatible logger (jobs finished, attempt outcomes, unexpected errors). Default silent. */
  logger?: Logger;
}

/** {@link SenderOptions} with defaults, checked. @internal */
export interface ResolvedSenderOptions {
  accounts: AccountsConfig | undefined;
  apiKeys: readonly string[];
  privateKey: PrivateKeyInput | undefined;
  stateDir: string | undefined;
  publicKeyFile: string | undefined;
  redisUrl: string | undefined;
  redisPrefix: string;
  bodyStyle: BodyStyle;
  headerNames: Partial<WebhookHeaderNames>;
  userAgent: string | undefined;
  attemptTimeoutMs: number;
  retryBaseMs: number;
  maxRetries: number;
  maxRetryDelayMs: number;
  allowInsecureReceivers: boolean;
  allowPrivateReceivers: boolean;
  receiverAllowlist: readonly string[];
  dashboard: boolean;
  dashboardReceiver: string | undefined;
  resolveHost: HostResolver | undefined;
  deliveryConcurrency: number;
  jobDelayMs: number;
  queueLockMs: number;
  maxCanonicalBytes: number;
  redeliverCooldownMs: number;
  maxRedeliveries: number;
  http: HttpTimeouts;
  memoryStore: { maxJobs: number; maxBytes: number; settledTtlMs: number };
  random: (() => number) | undefined;
  now: () => Date;
  logger: Logger;
}

const WHERE = 'createSender';

const KNOWN = new Set([
  'accounts',
  'apiKeys',
  'privateKey',
  'stateDir',
  'publicKeyFile',
  'redisUrl',
  'redisPrefix',
  'bodyStyle',
  'headerNames',
  'userAgent',
  'attemptTimeoutMs',
  'retryBaseMs',
  'maxRetries',
  'maxRetryDelayMs',
  'allowInsecureReceivers',
  'allowPrivateReceivers',
  'receiverAllowlist',
  'dashboard',
  'dashboardReceiver',
  'resolveHost',
  'deliveryConcurrency',
  'jobDelayMs',
  'queueLockMs',
  'maxCanonicalBytes',
  'redeliverCooldownMs',
  'maxRedeliveries',
  'maxStoredJobs',
  'maxStoredJobBytes',
  'storedJobTtlMs',
  'requestTimeoutMs',
  'headersTimeoutMs',
  'keepAliveTimeoutMs',
  'connectionTimeoutMs',
  'random',
  'now',
  'logger',
]);

function fail(message: string): never {
  throw optionError(WHERE, message);
}

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  return value === undefined ? fallback : checkInteger(WHERE, name, value, { min, max });
}

function boolean(name: string, value: unknown): boolean {
  return value === undefined ? false : checkBoolean(WHERE, name, value);
}

function optionalFunction<T>(name: string, value: unknown): T | undefined {
  return value === undefined ? undefined : (checkFunction(WHERE, name, value) as T);
}

/** Longest `dashboardReceiver`: the length browsers and servers commonly accept for a URL. */
const MAX_URL_LENGTH = 2048;

/** An absolute http(s) URL, normalized (`URL.href`: quotes and angle brackets percent-encoded), or undefined. */
function receiverUrl(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    if (typeof value === 'string' && value.length <= MAX_URL_LENGTH) url = new URL(value);
  } catch {
    // Not a URL: refused below.
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    fail(`${name} must be an http:// or https:// URL of at most ${MAX_URL_LENGTH} characters, got ${JSON.stringify(value)}`);
  return url.href;
}

/**
 * Checks every option of `createSender` and applies the defaults. What needs a file or a server is
 * checked where it is used, still before the sender starts: the accounts (`validateAccountsConfig`,
 * and whether an api key is already another key's token), the key (`loadPrivateKey`), the Redis URL's
 * server, and the state folder's files.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveSenderOptions(options: SenderOptions | undefined): ResolvedSenderOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('options must be an object');
  for (const [name, value] of Object.entries(options)) {
    if (!KNOWN.has(name) && value !== undefined) fail(`unknown option ${JSON.stringify(name)}`);
  }
  const o = options;
  if (o.accounts !== undefined && (typeof o.accounts !== 'object' || o.accounts === null))
    fail('accounts must be an object (see loadAccountsConfig)');
  const apiKeys = o.apiKeys ?? [];
  if (!Array.isArray(apiKeys) || apiKeys.some((k) => typeof k !== 'string')) fail('apiKeys must be an array of token strings');
  // Each token's form here; whether it is another key's token is told once the accounts are read (buildAccountKeys).
  apiKeys.forEach((token, i) => {
    const problem = tokenProblem(token);
    if (problem !== undefined) fail(`apiKeys[${i}] ${problem}`);
  });

  for (const name of ['stateDir', 'publicKeyFile'] as const) {
    const path = o[name];
    if (path !== undefined && (typeof path !== 'string' || path.trim() === '' || path.includes('\0')))
      fail(`${name} must be a non-empty path, got ${JSON.stringify(path)}`);
  }
  if (o.redisUrl !== undefined) checkRedisUrl(WHERE, 'redisUrl', o.redisUrl);
  const redisPrefix = o.redisPrefix ?? 'jobhook';
  if (typeof redisPrefix !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(redisPrefix)) {
    fail(`redisPrefix must be 1-64 characters of A-Z a-z 0-9 _ . -, got ${String(redisPrefix)}`);
  }

  const bodyStyle = o.bodyStyle ?? 'python';
  if (!isBodyStyle(bodyStyle)) {
    fail(`bodyStyle must be "python", "canonical" or "compact", got ${JSON.stringify(bodyStyle)}`);
  }
  const headerNames = o.headerNames ?? {};
  if (typeof headerNames !== 'object' || headerNames === null) fail('headerNames must be an object');
  for (const [key, name] of Object.entries(headerNames)) {
    if (!['signature', 'hashAlgorithm', 'webhook'].includes(key))
      fail(`headerNames.${key} is not known (signature, hashAlgorithm, webhook)`);
    if (name !== undefined && !isHeaderName(name)) {
      fail(`headerNames.${key} must be an HTTP header name, got ${JSON.stringify(name)}`);
    }
  }
  if (o.userAgent !== undefined && (typeof o.userAgent !== 'string' || o.userAgent === '' || /[\u0000-\u001f\u007f]/.test(o.userAgent))) {
    fail('userAgent must be a non-empty string without control characters');
  }

  const attemptTimeoutMs = integer('attemptTimeoutMs', o.attemptTimeoutMs, 30_000, 1, 600_000);
  const retryBaseMs = integer('retryBaseMs', o.retryBaseMs, 1000, 1, 3_600_000);
  const maxRetries = integer('maxRetries', o.maxRetries, 3, 0, 100);
  const maxRetryDelayMs = integer('maxRetryDelayMs', o.maxRetryDelayMs, 30_000, 1, 3_600_000);
  if (maxRetryDelayMs < retryBaseMs) fail(`maxRetryDelayMs (${maxRetryDelayMs}) must be at least retryBaseMs (${retryBaseMs})`);
  const deliveryConcurrency = integer('deliveryConcurrency', o.deliveryConcurrency, 16, 1, 10_000);
  const jobDelayMs = integer('jobDelayMs', o.jobDelayMs, 100, 0, 600_000);
  const queueLockMs = integer('queueLockMs', o.queueLockMs, 30_000, 100, 600_000);
  const maxCanonicalBytes = integer(
    'maxCanonicalBytes',
    o.maxCanonicalBytes,
    DEFAULT_MAX_CANONICAL_BYTES,
    MIN_MAX_CANONICAL_BYTES,
    Number.MAX_SAFE_INTEGER,
  );
  const redeliverCooldownMs = integer('redeliverCooldownMs', o.redeliverCooldownMs, DEFAULT_REDELIVER_COOLDOWN_MS, 0, 86_400_000);
  const maxRedeliveries = integer('maxRedeliveries', o.maxRedeliveries, DEFAULT_MAX_REDELIVERIES, 0, 1_000_000);

  const maxStoredJobs = integer('maxStoredJobs', o.maxStoredJobs, DEFAULT_MAX_STORED_JOBS, 1, 10_000_000);
  const maxStoredJobBytes = integer(
    'maxStoredJobBytes',
    o.maxStoredJobBytes,
    DEFAULT_MAX_STORED_JOB_BYTES,
    1024 * 1024,
    Number.MAX_SAFE_INTEGER,
  );
  const storedJobTtlMs = integer('storedJobTtlMs', o.storedJobTtlMs, DEFAULT_STORED_JOB_TTL_MS, 1, MAX_TIMER_MS);
  const requestTimeoutMs = integer('requestTimeoutMs', o.requestTimeoutMs, DEFAULT_HTTP_TIMEOUTS.requestTimeoutMs, 100, 600_000);
  // Node refuses a headersTimeout above requestTimeout: the headers are part of the request.
  const headersTimeoutMs = integer(
    'headersTimeoutMs',
    o.headersTimeoutMs,
    Math.min(DEFAULT_HTTP_TIMEOUTS.headersTimeoutMs, requestTimeoutMs),
    100,
    requestTimeoutMs,
  );
  const keepAliveTimeoutMs = integer('keepAliveTimeoutMs', o.keepAliveTimeoutMs, DEFAULT_HTTP_TIMEOUTS.keepAliveTimeoutMs, 1, 600_000);
  const connectionTimeoutMs = integer(
    'connectionTimeoutMs',
    o.connectionTimeoutMs,
    DEFAULT_HTTP_TIMEOUTS.connectionTimeoutMs,
    100,
    600_000,
  );

  const allowInsecureReceivers = boolean('allowInsecureReceivers', o.allowInsecureReceivers);
  const allowPrivateReceivers = boolean('allowPrivateReceivers', o.allowPrivateReceivers);
  const receiverAllowlist = o.receiverAllowlist ?? [];
  if (!Array.isArray(receiverAllowlist)) fail('receiverAllowlist must be an array of CIDRs');
  receiverAllowlist.forEach((cidr: unknown, i) => {
    if (typeof cidr !== 'string' || !ipaddr.isValidCIDR(cidr))
      fail(`receiverAllowlist[${i}] must be a CIDR such as 127.0.0.0/8, got ${JSON.stringify(cidr)}`);
  });

  const dashboardReceiver = receiverUrl('dashboardReceiver', o.dashboardReceiver);
  const resolveHost = optionalFunction<HostResolver>('resolveHost', o.resolveHost);
  const random = optionalFunction<() => number>('random', o.random);
  const now = optionalFunction<() => Date>('now', o.now) ?? (() => new Date());
  const logger = checkLogger(WHERE, o.logger ?? silentLogger);

  return {
    accounts: o.accounts,
    apiKeys,
    privateKey: o.privateKey,
    stateDir: o.stateDir,
    publicKeyFile: o.publicKeyFile,
    redisUrl: o.redisUrl,
    redisPrefix,
    bodyStyle,
    headerNames,
    userAgent: o.userAgent,
    attemptTimeoutMs,
    retryBaseMs,
    maxRetries,
    maxRetryDelayMs,
    allowInsecureReceivers,
    allowPrivateReceivers,
    receiverAllowlist,
    dashboard: o.dashboard === undefined ? true : boolean('dashboard', o.dashboard),
    dashboardReceiver,
    resolveHost,
    deliveryConcurrency,
    jobDelayMs,
    queueLockMs,
    maxCanonicalBytes,
    redeliverCooldownMs,
    maxRedeliveries,
    memoryStore: { maxJobs: maxStoredJobs, maxBytes: maxStoredJobBytes, settledTtlMs: storedJobTtlMs },
    http: { requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs, connectionTimeoutMs },
    random,
    now,
    logger,
  };
}
