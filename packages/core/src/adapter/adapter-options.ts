import { optionError } from '../internal/option-checks.js';

/** The second argument of every adapter factory (Express, Koa, Fastify, Fetch). */
export interface AdapterOptions {
  /**
   * The webhook path (exact match). Requests to other paths pass by (`next()` in Express and Koa;
   * 404 from the Fetch handler). Default: none, every request that reaches the adapter is a webhook
   * request (Fastify: `/webhooks/jobs`, the route it adds).
   */
  path?: string;
}

/**
 * Checks an adapter's second argument; answers its `path` (or `undefined`).
 * @throws JobhookError `ERR_OPTION_INVALID`, the message starting with the adapter's name.
 */
export function adapterPath(options: AdapterOptions | undefined, adapter: string): string | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) {
    throw optionError(adapter, `options must be an object, got ${String(options)}`);
  }
  const { path } = options;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    throw optionError(adapter, `path must be a string starting with "/", got ${JSON.stringify(path)}`);
  }
  return path;
}
