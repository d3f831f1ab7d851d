import { JobhookError } from '../errors.js';
import { checkFunction, checkMethods, checkObject, describeValue, optionError } from '../internal/option-checks.js';
import { createReceiver, type Receiver } from '../receiver/create-receiver.js';
import type { ReceiverOptions } from '../receiver/receiver-options.js';

// The arguments every adapter factory takes (core's createFetchHandler, and @jobhook/express, koa
// and fastify through @jobhook/core/adapter) are checked here, so each adapter refuses a mistake in
// the same words, led by its own name. The option types live here too, with their checks.

/** What every adapter factory takes: a receiver you made, or the options to make one. */
export type ReceiverOrOptions = Receiver | ReceiverOptions;

/** What a Receiver must have for an adapter to run it: `precheck`, then the admission's `receive`; `handle` and `stats` besides. */
const RECEIVER_METHODS = ['handle', 'precheck', 'stats'] as const;

/**
 * The receiver an adapter runs: the one given, or one created from options (checked now, so a
 * configuration mistake fails at startup with the adapter's name in the message).
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID`, the message led by `adapter`.
 */
export function resolveReceiver(input: ReceiverOrOptions, adapter: string): Receiver {
  checkObject(adapter, 'receiverOrOptions', input, 'a Receiver or receiver options');
  const given = input as Partial<Receiver>;
  // Something with one of a receiver's methods is meant as a receiver: checked as one, not as options.
  if (typeof given.handle === 'function' || typeof given.precheck === 'function') {
    return checkMethods<Receiver>(adapter, 'receiver', input, RECEIVER_METHODS, 'a Receiver, made by createReceiver()');
  }
  try {
    return createReceiver(input as ReceiverOptions);
  } catch (err) {
    if (err instanceof JobhookError) throw new JobhookError(err.code, `${adapter}: ${err.message}`, { cause: err });
    throw err;
  }
}

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
  checkObject(adapter, 'options', options);
  const { path } = options;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    throw optionError(adapter, `path must be a string starting with "/", got ${describeValue(path)}`);
  }
  return path;
}

/** Options of `createFetchHandler`: `path`, and how to find the client's address. */
export interface FetchHandlerOptions extends AdapterOptions {
  /**
   * The client's address, for the per-client share of the body budget (`RequestHead.clientAddress`).
   * A `Request` has none of its own, so each runtime says where it is: Bun
   * `(req, server) => server.requestIP(req)?.address`, Deno `(req, info) => info.remoteAddr.hostname`,
   * Cloudflare Workers `(req) => req.headers.get('cf-connecting-ip') ?? undefined`, Next.js only
   * behind a proxy you trust: the first address of `x-forwarded-for`. Trust a forwarded header only
   * when your own proxy sets it. Default: none (every request shares one key).
   */
  clientAddress?: (request: Request, ...platform: unknown[]) => string | null | undefined;
}

/** Where a runtime keeps the client's address: {@link FetchHandlerOptions.clientAddress}. */
type ClientAddressOf = NonNullable<FetchHandlerOptions['clientAddress']>;

/** {@link FetchHandlerOptions} checked. @internal */
export interface ResolvedFetchHandlerOptions {
  readonly path: string | undefined;
  readonly clientAddress: ClientAddressOf | undefined;
}

/**
 * Checks `createFetchHandler`'s second argument.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveFetchHandlerOptions(options: FetchHandlerOptions | undefined): ResolvedFetchHandlerOptions {
  const where = 'createFetchHandler';
  const path = adapterPath(options, where);
  const value = options?.clientAddress;
  const clientAddress =
    value === undefined
      ? undefined
      : checkFunction<ClientAddressOf>(where, 'clientAddress', value, 'a function (request, ...platform) => string');
  return { path, clientAddress };
}
