import { JobhookError } from '@jobhook/core';
import { parseRedisUrl, quitRedisClient, redactUrl } from '@jobhook/core/internal';
import { Redis } from 'ioredis';

/** How long {@link connectRedis} waits for a first PONG before giving up. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

/**
 * Throws `ERR_OPTION_INVALID` unless `url` is a `redis://` or `rediss://` URL; returns the parsed URL.
 * A malformed URL is a configuration mistake, told at once rather than as "unreachable". @internal
 */
export function checkRedisUrl(where: string, url: unknown): URL {
  const parsed = parseRedisUrl(url);
  if (parsed === undefined) {
    throw new JobhookError(
      'ERR_OPTION_INVALID',
      `${where}: expected a redis:// or rediss:// URL, got ${typeof url === 'string' ? JSON.stringify(redactUrl(url)) : String(url)}`,
    );
  }
  return parsed;
}

/**
 * Opens an ioredis client on `url` and waits for it to answer PING, within `timeoutMs`: an
 * unreachable Redis then fails start-up with a clear `ERR_STORE_UNAVAILABLE` instead of a client
 * that retries forever in the background. The client returned reconnects by itself afterwards
 * (commands issued while disconnected fail at the first failed reconnection rather than hang).
 * @internal
 */
export async function connectRedis(where: string, url: string, timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): Promise<Redis> {
  checkRedisUrl(where, url);
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
  client.options.retryStrategy = (attempt: number) => Math.min(50 * attempt, 1000);
  return client;
}

/** QUIT (bounded by `timeoutMs`), then stop reconnecting for good. @internal */
export function quitRedis(client: Redis, timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): Promise<void> {
  return quitRedisClient(client, timeoutMs);
}

/**
 * The client of a `redis` option that takes a URL or an ioredis client: a URL is connected here
 * ({@link connectRedis}) and `owned` (the caller closes it); a client is used as given and stays
 * the user's. Anything else is `ERR_OPTION_INVALID`. @internal
 */
export async function redisFromOption(where: string, given: unknown): Promise<{ client: Redis; owned: boolean }> {
  if (typeof given === 'string') return { client: await connectRedis(where, given), owned: true };
  if (typeof given === 'object' && given !== null && typeof (given as Partial<Redis>).defineCommand === 'function') {
    return { client: given as Redis, owned: false };
  }
  throw new JobhookError('ERR_OPTION_INVALID', `${where}: redis must be a redis:// URL or an ioredis client`);
}

/**
 * Runs one Redis operation of a store, named `what` in messages (e.g. `redisJobStore.get`):
 * `ERR_STORE_UNAVAILABLE` when the store is `closed` or Redis fails (the API answers 503); a
 * `JobhookError` thrown by `send` passes as it is. @internal
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
