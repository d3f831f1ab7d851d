import type { Receiver } from '../receiver/receiver-types.js';
import { bodyReadError } from './body-read-error.js';
import { readCappedBody } from './read-capped-body.js';
import { createReceiveFlow } from './receive-flow.js';
import { resolveFetchHandlerOptions, resolveReceiver, type FetchHandlerOptions, type ReceiverOrOptions } from './adapter-option-checks.js';

/**
 * A web-standard handler, `(request, ...platform) => Promise<Response>`, with the receiver it runs:
 * `platform` is whatever the runtime passes after the request (Bun's `server`, Deno's `info`,
 * Workers' `env` and `ctx`), handed to `clientAddress` untouched.
 */
export type FetchWebhookHandler = ((request: Request, ...platform: unknown[]) => Promise<Response>) & { readonly receiver: Receiver };

/**
 * Creates a handler for runtimes that speak the Fetch API (Next.js route handlers, Hono, Bun, Deno,
 * Cloudflare Workers, `@hono/node-server`): it runs `receiver.precheck` (method, content type,
 * declared length, signature header, the RSA recovery of what a configured key signed, a share of
 * `maxBodyBytesInFlight`) and answers a refusal without reading a byte of the body; otherwise it
 * reads the body as bytes (refused with 413 as soon as the bytes read pass the declared length or
 * `maxBodyBytes`, without reading the rest; cancelled with 503 `ERR_BODY_TIMEOUT` past
 * `bodyTimeoutMs`), runs the rest of the pipeline and answers with its `Response`. It always
 * answers; it never throws. The body must reach it unread (a body a middleware consumed answers
 * 400 `ERR_BODY_INCOMPLETE`). A refused request's body is left unread: what becomes of it and of
 * the connection is the runtime's (a `Response` has no connection to close).
 *
 * @param receiverOrOptions a `Receiver` from `createReceiver`, or the options to create one.
 * @param options `path`: answer only requests to that path (the URL's pathname, exact match); other
 * paths get an empty 404, untouched by the receiver. Default: every request is a webhook request.
 * `clientAddress`: where the runtime keeps the client's address (see {@link FetchHandlerOptions}).
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID` at construction.
 * @example
 * ```ts
 * // app/webhooks/jobs/route.ts (Next.js)
 * const handler = createFetchHandler({ publicKeys: process.env.SERVICE_PUBLIC_KEY!, onEvent: saveJob });
 * export const POST = handler;
 * ```
 */
export function createFetchHandler(receiverOrOptions: ReceiverOrOptions, options?: FetchHandlerOptions): FetchWebhookHandler {
  const receiver = resolveReceiver(receiverOrOptions, 'createFetchHandler');
  const { path, clientAddress: addressOf } = resolveFetchHandlerOptions(options);

  const flow = createReceiveFlow<Request, unknown[], Response>(receiver, {
    head: (request, platform) => ({ method: request.method, headers: request.headers, clientAddress: clientAddressOf(request, platform) }),
    readBody: (request, admission) => readCappedBody(request, admission, () => bodyReadError({ status: 413 }, admission.maxBytes)),
    respond: ({ body, status, headers }) => new Response(body, { status, headers }),
  });

  async function jobhookFetchHandler(request: Request, ...platform: unknown[]): Promise<Response> {
    if (path !== undefined && new URL(request.url).pathname !== path) return new Response(null, { status: 404 });
    return flow.run(request, platform);
  }

  /** The client's address, or none when there is no rule or it throws (an unknown client, not a failed request). */
  function clientAddressOf(request: Request, platform: unknown[]): string | undefined {
    if (addressOf === undefined) return undefined;
    try {
      return addressOf(request, ...platform) ?? undefined;
    } catch {
      return undefined;
    }
  }
  return Object.assign(jobhookFetchHandler, { receiver });
}
