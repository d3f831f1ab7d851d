import type { FastifyServerOptions } from 'fastify';

/** The HTTP server's timeouts, checked (see `SenderOptions`). @internal */
export interface HttpTimeouts {
  /** Whole request (headers and body) received within this, else 408 and the connection closed. */
  requestTimeoutMs: number;
  /** Request line and headers received within this (Node's `headersTimeout`); at most `requestTimeoutMs`. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (`socket.setTimeout`). */
  connectionTimeoutMs: number;
}

/** Defaults: a slow client may take 30 s for a 1 MiB body, not forever. */
export const DEFAULT_HTTP_TIMEOUTS: Readonly<HttpTimeouts> = Object.freeze({
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  connectionTimeoutMs: 60_000,
});

/**
 * Fastify's server options for `timeouts`. Node checks `headersTimeout` and `requestTimeout` on a
 * periodic sweep (`connectionsCheckingInterval`, 30 s by default), so a 30 s timeout could take up
 * to 60 s to fire; the sweep runs here at half the shorter timeout, at most every second.
 * @internal
 */
export function httpTimeoutOptions(timeouts: HttpTimeouts): Pick<
  FastifyServerOptions,
  'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout'
> & {
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const shorter = Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs);
  return {
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    connectionTimeout: timeouts.connectionTimeoutMs,
    http: { headersTimeout: timeouts.headersTimeoutMs, connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(shorter / 2))) },
  };
}
