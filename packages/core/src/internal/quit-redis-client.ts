import type { Redis } from 'ioredis';

/**
 * Quits a client you made: QUIT when connected (bounded by `timeoutMs`), then stop reconnecting for
 * good. The Redis store uses it for the clients it makes; the delivery queues for theirs.
 * Only a type of ioredis is used here, so importing `@jobhook/core/internal` does not load ioredis.
 * @internal
 */
export async function quitRedisClient(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([client.quit().then(noop, noop), deadline]);
    clearTimeout(timer);
  }
  client.disconnect();
}

function noop(): void {}
