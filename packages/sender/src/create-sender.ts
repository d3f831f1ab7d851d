import { createPublicKey, type KeyObject } from 'node:crypto';
import { JobhookError } from '@jobhook/core';
import { optionError } from '@jobhook/core/internal';
import { loadPrivateKey, loadPublicKey } from '@jobhook/core/sign';
import {
  createBullmqWorkQueue,
  createDeliverer,
  createMemoryWorkQueue,
  createRetryPolicy,
  createSsrfGuard,
  type SsrfGuard,
  type WorkQueue,
} from '@jobhook/delivery';
import { receiverRefused, withDeadline } from '@jobhook/delivery/internal';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { buildAccountKeys, createAccountRegistry, type KeyUsage } from './accounts/account-registry.js';
import { createMemoryCreditLedger, type CreditLedger } from './accounts/credit-ledger.js';
import type { AccountsConfig } from './accounts/accounts-config.js';
import { createDevAccounts, devKeysOf, type DevKeys } from './accounts/dev-accounts.js';
import { createRedisCreditLedger } from './accounts/redis-credit-ledger.js';
import { validateAccountsConfig } from './accounts/validate-accounts-config.js';
import { createApi } from './api/create-api.js';
import { createAuthenticator } from './auth/authenticate.js';
import { registerDashboard } from './dashboard/serve-dashboard.js';
import type { JobStore } from './jobs/job-record.js';
import { createJobService } from './jobs/job-service.js';
import { deliveringKeyId, stampingKeyId } from './jobs/signing-key-id.js';
import { createMemoryJobStore } from './jobs/memory-job-store.js';
import { createRedisJobStore } from './jobs/redis-job-store.js';
import { buildWebhookPayload } from './jobs/webhook-payload.js';
import { registerMetricsRoute } from './metrics/metrics-route.js';
import { createSenderMetrics, observeDeliverer } from './metrics/sender-metrics.js';
import { resolveListenOptions } from './options/listen-options.js';
import { resolveSenderOptions, type ResolvedSenderOptions, type SenderOptions } from './options/sender-options.js';
import { replaceFile } from './state/atomic-file.js';
import { generateSigningKey, openStateDir, stateAccounts, stateSigningKey } from './state/sender-state.js';

/** A running reference service. */
export interface Sender {
  /** The Fastify app with every route registered, not listening (use `app.inject`, or {@link Sender.listen}). */
  readonly app: FastifyInstance;
  /**
   * Starts listening and returns the base URL, e.g. `http://127.0.0.1:8080`. Default port 8080,
   * host 127.0.0.1; port 0 picks a free port. For host `0.0.0.0` / `::` the URL names the loopback address.
   */
  listen(options?: { port?: number; host?: string }): Promise<string>;
  /** SPKI PEM of the signing key: what receivers verify with. */
  readonly publicKeyPem: string;
  /**
   * The signing key's id as receivers log it (`keyIdsTried`, core's `RingKey.id`): lowercase hex
   * SHA-256 of the public key's SPKI DER. A delivery answered 401 records it (`key_id`).
   */
  readonly keyId: string;
  /**
   * The delivery metrics (`jobhook_sender_deliveries_total{result}`, an attempt-duration histogram),
   * a registry of this sender's own; the app answers them at `GET /metrics`.
   */
  readonly metrics: Registry;
  /**
   * Tokens of the dev keys when no `accounts` were given (generated, or read back from `stateDir`):
   * organization `dev`'s inference and management keys, organization `other`'s inference key. Else null.
   */
  readonly devKeys: DevKeys | null;
  /**
   * Requests and credits charged per key, and balances: since start, or with `redisUrl` as every
   * sender process on that Redis counted them (they survive restarts).
   */
  usage(): Promise<KeyUsage[]>;
  /** Stops HTTP (in-flight requests get 5 s to finish), then the queue (running handlers finish), then the job store and credit ledger. Idempotent. */
  close(): Promise<void>;
}

const WHERE = 'createSender';
/** Longest DNS lookup of a submission's `webhook_receiver` (or `attemptTimeoutMs` when shorter). */
const SUBMIT_RESOLVE_TIMEOUT_MS = 5000;
/** How long `close()` lets in-flight requests finish before it closes their connections. */
const CLOSE_GRACE_MS = 5000;

async function signingKey(input: ResolvedSenderOptions['privateKey'], stateDir: string | undefined): Promise<KeyObject> {
  if (input === undefined) return stateDir === undefined ? generateSigningKey() : stateSigningKey(stateDir);
  try {
    return loadPrivateKey(input);
  } catch (err) {
    if (err instanceof JobhookError) throw new JobhookError(err.code, `${WHERE}: privateKey: ${err.message}`, { cause: err });
    throw err;
  }
}

function receiverGuard(o: ResolvedSenderOptions): SsrfGuard {
  return createSsrfGuard({
    allowInsecure: o.allowInsecureReceivers,
    allowPrivate: o.allowPrivateReceivers,
    allowCidrs: o.receiverAllowlist,
    ...(o.resolveHost === undefined ? {} : { resolve: o.resolveHost }),
  });
}

/**
 * Creates the reference service: the `/v3` API (bearer auth, keys, async jobs, chat completions),
 * simulated providers, and signed webhook delivery with retries and an SSRF guard; jobs, work and credits in
 * memory, or in Redis with `redisUrl`.
 *
 * @example
 * ```ts
 * const sender = await createSender({ allowInsecureReceivers: true, receiverAllowlist: ['127.0.0.0/8'] });
 * const baseUrl = await sender.listen({ port: 0 });
 * console.log(baseUrl, sender.devKeys?.inference, sender.publicKeyPem);
 * await sender.close();
 * // The same key and dev tokens on every start, the public key where receivers read it:
 * await createSender({ stateDir: '.jobhook', publicKeyFile: 'service-public.pem' });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` for a wrong option (message naming it), or a `stateDir`
 * or `publicKeyFile` file that cannot be read or written or holds unusable accounts (message naming
 * the file; `detail.path`); `ERR_KEY_INVALID` for an unusable `privateKey` or state key;
 * `ERR_STORE_UNAVAILABLE` when `redisUrl` cannot be reached.
 */
export async function createSender(options?: SenderOptions): Promise<Sender> {
  const o = resolveSenderOptions(options);
  // The state folder is touched only for what it is to keep: given a key and accounts, nothing.
  if (o.stateDir !== undefined && (o.privateKey === undefined || o.accounts === undefined)) await openStateDir(o.stateDir);
  let accountsConfig: AccountsConfig;
  let devKeys: DevKeys | null = null;
  if (o.accounts !== undefined) {
    accountsConfig = validateAccountsConfig(o.accounts, `${WHERE}: accounts`);
  } else if (o.stateDir !== undefined) {
    accountsConfig = await stateAccounts(o.stateDir, () => createDevAccounts(o.random));
    devKeys = devKeysOf(accountsConfig);
  } else {
    const dev = createDevAccounts(o.random);
    accountsConfig = dev.config;
    devKeys = dev.keys;
  }
  const keys = buildAccountKeys(accountsConfig, o.apiKeys);
  const guard = receiverGuard(o);
  const policy = createRetryPolicy({
    maxRetries: o.maxRetries,
    baseMs: o.retryBaseMs,
    capMs: o.maxRetryDelayMs,
    ...(o.random === undefined ? {} : { random: o.random }),
  });
  const privateKey = await signingKey(o.privateKey, o.stateDir);
  const publicKeyPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  const keyId = loadPublicKey(publicKeyPem).id;
  if (o.publicKeyFile !== undefined) {
    const file = o.publicKeyFile;
    await replaceFile(file, publicKeyPem, 0o644).catch((cause: unknown) => {
      throw optionError(WHERE, `publicKeyFile: cannot write ${file}: ${(cause as Error).message}`, {
        cause,
        detail: { path: file, access: 'write' },
      });
    });
  }

  let jobs: JobStore | undefined;
  let queue: WorkQueue | undefined;
  let ledger: CreditLedger | undefined;
  try {
    if (o.redisUrl === undefined) {
      ledger = createMemoryCreditLedger();
      // The TTL runs on the injected clock when one is given (tests), else on a monotonic one.
      const clock = options?.now === undefined ? {} : { now: () => o.now().getTime() };
      jobs = createMemoryJobStore({ ...o.memoryStore, ...clock });
      queue = createMemoryWorkQueue({ concurrency: o.deliveryConcurrency, logger: o.logger });
    } else {
      // Credits in Redis too: sender processes sharing the work share the balances, and a restart keeps them.
      ledger = await createRedisCreditLedger({ redis: o.redisUrl, prefix: `${o.redisPrefix}:sender:` });
      jobs = await createRedisJobStore({ redis: o.redisUrl, prefix: `${o.redisPrefix}:sender:` });
      queue = await createBullmqWorkQueue({
        connection: o.redisUrl,
        prefix: o.redisPrefix,
        concurrency: o.deliveryConcurrency,
        lockDurationMs: o.queueLockMs,
        logger: o.logger,
      });
    }
    const accounts = createAccountRegistry(keys, ledger);
    const headerNames = Object.fromEntries(Object.entries(o.headerNames).filter(([, v]) => v !== undefined));
    const metrics = createSenderMetrics();
    const deliverer = observeDeliverer(
      deliveringKeyId(
        createDeliverer({
          // Each attempt answered 401 records the key it was signed with, as the receiver names its keys.
          jobs: stampingKeyId(jobs, keyId),
          payload: buildWebhookPayload,
          privateKey,
          policy,
          guard,
          attemptTimeoutMs: o.attemptTimeoutMs,
          bodyStyle: o.bodyStyle,
          headerNames,
          ...(o.userAgent === undefined ? {} : { userAgent: o.userAgent }),
          now: () => o.now().getTime(),
          logger: o.logger,
          maxCanonicalBytes: o.maxCanonicalBytes,
        }),
        keyId,
      ),
      metrics.observeAttempt,
    );
    const service = createJobService({
      jobs,
      queue,
      deliverer,
      now: o.now,
      logger: o.logger,
      redeliverCooldownMs: o.redeliverCooldownMs,
      maxRedeliveries: o.maxRedeliveries,
    });
    const app = createApi(
      {
        accounts,
        authenticate: createAuthenticator(accounts, o.now),
        jobs,
        service,
        checkReceiver: async (url) => {
          // Bounded like an attempt's lookup: a name whose DNS never answers must not hold the request.
          const target = await withDeadline(guard.resolveTarget(url), Math.min(o.attemptTimeoutMs, SUBMIT_RESOLVE_TIMEOUT_MS));
          if (target === 'timeout') throw receiverRefused('resolve_failed', 'the host name did not resolve in time');
          return target;
        },
        now: o.now,
        jobDelayMs: o.jobDelayMs,
        maxCanonicalBytes: o.maxCanonicalBytes,
        // The deliverer's own signing and signed-payload cache: what is shown is what its attempts sent.
        signWebhook: (job) => deliverer.webhook(job),
        logger: o.logger,
      },
      o.http,
    );
    registerMetricsRoute(app, metrics.registry);
    if (o.dashboard) registerDashboard(app, o.logger, { receiver: o.dashboardReceiver });
    await queue.start(service.handlers);

    const openJobs = jobs;
    const openQueue = queue;
    const openLedger = ledger;
    let closing: Promise<void> | undefined;
    return {
      app,
      publicKeyPem,
      keyId,
      metrics: metrics.registry,
      devKeys: devKeys === null ? null : { ...devKeys },
      async listen(listenOptions = {}) {
        const { port, host } = resolveListenOptions(listenOptions);
        await app.listen({ port, host });
        const address = app.server.address();
        const boundPort = typeof address === 'object' && address !== null ? address.port : port;
        const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
        return `http://${shown.includes(':') ? `[${shown}]` : shown}:${boundPort}`;
      },
      usage: () => accounts.usage(),
      close() {
        closing ??= (async () => {
          // HTTP first (no new jobs), then the queue (running handlers may still use the store), then the store.
          // In-flight requests get a grace period; a client that never finishes its request must
          // not hold the shutdown forever.
          const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
          force.unref();
          // Every part is closed even when an earlier one fails (the workers and Redis clients must, or
          // the process cannot exit); then the first failure is told.
          const http = await Promise.allSettled([app.close()]);
          clearTimeout(force);
          const queue = await Promise.allSettled([openQueue.close()]);
          const stores = await Promise.allSettled([openJobs.close(), openLedger.close()]);
          const failed = [...http, ...queue, ...stores].find((r) => r.status === 'rejected');
          if (failed !== undefined) throw failed.reason;
        })();
        return closing;
      },
    };
  } catch (err) {
    await queue?.close().catch(() => {});
    await jobs?.close().catch(() => {});
    await ledger?.close().catch(() => {});
    throw err;
  }
}
