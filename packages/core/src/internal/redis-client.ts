/**
 * @jobhook/core/internal/redis: the one place where jobhook makes its ioredis clients, with the
 * settings of each use: the idempotency store's client (connects in the background, commands wait
 * for it), the clients of the sender's stores (connected and answering PING before start-up goes on)
 * and the BullMQ connections of the delivery queues (BullMQ needs `maxRetriesPerRequest: null` on
 * its workers' blocking connections). A subpath apart from `@jobhook/core/internal`, because this
 * module loads ioredis. Not a public API: no semver promise.
 * @packageDocumentation
 * @internal
 */
import { type Cluster, Redis, type RedisOptions } from 'ioredis';
import { JobhookError } from '../errors.js';
import { checkRedisUrl, describeValue, optionError, redactUrl } from './option-checks.js';
import { quitRedisClient } from './quit-redis-client.js';

export { quitRedisClient };

/** How long {@link connectRedis} waits for a first PONG, and a BullMQ connection for its socket, by default. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

/** Reconnection of a store's client: forever, at most one second apart, so it recovers when Redis is back. */
const reconnect = (attempt: number): number => Math.min(50 * attempt, 1000);

/**
 * True for an ioredis `Redis` or `Cluster` client (or a look-alike with `defineCommand`): what a
 * `redis` option accepts besides a URL.
 */
export function isRedisClient(value: unknown): value is Redis | Cluster {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { defineCommand?: unknown }).defineCommand === 'function' &&
    typeof (value as { status?: unknown }).status === 'string'
  );
}

/**
 * Settings of the idempotency store's client (and of any store that must not hold up start-up):
 * it connects in the background; commands issued while (re)connecting wait in the offline queue
 * (so the first requests after start-up are not refused) but are failed at the first failed
 * connection attempt (`maxRetriesPerRequest: 0`) rather than retried; a connection attempt or a
 * silent socket is given up after `timeoutMs`; reconnection goes on forever, at most one second apart.
 */
export function storeClientOptions(timeoutMs: number) {
  return {
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    retryStrategy: reconnect,
  } satisfies RedisOptions;
}

/**
 * A client on `url` with {@link storeClientOptions}, connecting in the background: creation never
 * waits for Redis. The URL is checked first (`ERR_OPTION_INVALID` naming `where`).
 *
 * @example
 * ```ts
 * const client = createStoreClient('createRedisStore', 'redis://127.0.0.1:6379', 2000);
 * ```
 */
export function createStoreClient(where: string, url: string, timeoutMs: number): Redis {
  checkRedisUrl(where, 'redis', url, { orClient: true });
  return new Redis(url, storeClientOptions(timeoutMs));
}

/**
 * The client of a store's `redis` option (a URL or an ioredis `Redis`/`Cluster` client), for stores
 * that must not hold up start-up: a URL gets a {@link createStoreClient} client, `owned` (the caller
 * quits it and listens for its errors); a client is used as given and stays the user's. Anything
 * else is `ERR_OPTION_INVALID` naming `where`.
 */
export function storeClientFromOption(where: string, given: unknown, timeoutMs: number): { client: Redis | Cluster; owned: boolean } {
  if (typeof given === 'string') return { client: createStoreClient(where, given, timeoutMs), owned: true };
  if (isRedisClient(given)) return { client: given, owned: false };
  throw optionError(where, `redis must be a redis:// or rediss:// URL or an ioredis Redis or Cluster client, got ${describeValue(given)}`);
}

/**
 * Opens a client on `url` and waits for it to answer PING within `timeoutMs`: an unreachable Redis
 * then fails start-up with a clear `ERR_STORE_UNAVAILABLE` instead of a client that retries forever
 * in the background. The client returned reconnects by itself afterwards (commands issued while
 * disconnected fail at the first failed reconnection rather than hang).
 *
 * @example
 * ```ts
 * const client = await connectRedis('createRedisJobStore', 'redis://127.0.0.1:6379/0');
 * ```
 */
export async function connectRedis(where: string, url: string, timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): Promise<Redis> {
  checkRedisUrl(where, 'redis', url, { orClient: true });
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    // A silent socket fails the command instead of hanging the caller.
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    // No retries while we wait for the first connection; set to a back-off once connected.
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  client.on('error', (err: Error) => {
    lastError = err;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    client.disconnect();
    const reason = (lastError ?? (err as Error)).message;
    throw new JobhookError('ERR_STORE_UNAVAILABLE', `${where}: cannot reach Redis at ${redactUrl(url)}: ${reason}`, {
      cause: lastError ?? err,
    });
  } finally {
    clearTimeout(timer);
  }
  client.options.retryStrategy = reconnect;
  return client;
}

/**
 * The client of a `redis` option that takes a URL or an ioredis client: a URL is connected here
 * ({@link connectRedis}) and `owned` (the caller quits it); a client is used as given and stays
 * the user's. Anything else is `ERR_OPTION_INVALID`.
 */
export async function redisFromOption(where: string, given: unknown): Promise<{ client: Redis; owned: boolean }> {
  if (typeof given === 'string') return { client: await connectRedis(where, given), owned: true };
  if (isRedisClient(given)) return { client: given as Redis, owned: false };
  throw optionError(where, `redis must be a redis:// or rediss:// URL or an ioredis client, got ${describeValue(given)}`);
}

/**
 * Connection options of a BullMQ queue (`'queue'`, a producer) or worker (`'worker'`); BullMQ makes
 * the clients from them. A producer's command gives up after a few quick reconnection tries, so an
 * enqueue during an outage fails in about a second instead of hanging the caller; a worker's
 * commands wait (`maxRetriesPerRequest: null`, which BullMQ requires of blocking connections).
 * Both reconnect forever, at most 2 s apart.
 *
 * @example
 * ```ts
 * new Worker(name, processor, { connection: bullmqConnection('redis://127.0.0.1:6379/0', 'worker') });
 * ```
 */
export function bullmqConnection(url: string, role: 'queue' | 'worker') {
  const retryStrategy = (attempt: number) => Math.min(100 * attempt, 2000);
  return {
    url,
    connectTimeout: DEFAULT_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: role === 'queue' ? 3 : null,
    retryStrategy,
  } satisfies RedisOptions & { url: string };
}

/**
 * Runs one Redis operation of a store, named `what` in messages (e.g. `redisJobStore.get`):
 * `ERR_STORE_UNAVAILABLE` when the store is `closed` or Redis fails (an API answers 503); a
 * `JobhookError` thrown by `send` passes as it is.
 *
 * @example
 * ```ts
 * const value = await redisCall('redisJobStore.get', closed, () => client.get(key));
 * ```
 */
export async function redisCall<T>(what: string, closed: boolean, send: () => Promise<T>): Promise<T> {
  if (closed) throw new JobhookError('ERR_STORE_UNAVAILABLE', `${what}: closed`);
  try {
    return await send();
  } catch (err) {
    if (err instanceof JobhookError) throw err;
    throw new JobhookError('ERR_STORE_UNAVAILABLE', `${what}: Redis failed: ${(err as Error).message}`, { cause: err });
  }
}
