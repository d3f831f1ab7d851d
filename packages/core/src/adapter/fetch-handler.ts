import type { Receiver } from '../receiver/create-receiver.js';
import { adapterView } from '../receiver/adapter-view.js';
import { adapterPath, type AdapterOptions } from './adapter-options.js';
import { bodyReadError } from './body-read-error.js';
import { readCappedBody } from './read-capped-body.js';
import { resolveReceiver, type ReceiverOrOptions } from './resolve-receiver.js';

/** A web-standard handler, `(request: Request) => Promise<Response>`, with the receiver it runs. */
export type FetchWebhookHandler = ((request: Request) => Promise<Response>) & { readonly receiver: Receiver };

/**
 * Creates a handler for runtimes that speak the Fetch API (Next.js route handlers, Hono, Bun, Deno,
 * Cloudflare Workers, `@hono/node-server`): it runs the checks that need no body
 * (method, content type, declared length, signature header) and answers a
 * refusal without reading the body; otherwise it reads the body as bytes (refused with 413 as soon as
 * the bytes read pass the receiver's `maxBodyBytes`, without reading the rest), runs the core receive
 * pipeline and answers with its `Response`. It always answers; it never throws.
 * The body must reach it unread (a body a middleware consumed answers 400 `ERR_BODY_INCOMPLETE`);
 * how long a slow upload may take is the runtime's limit, not this handler's.
 *
 * @param receiverOrOptions a `Receiver` from `createReceiver`, or the options to create one.
 * @param options `path`: answer only requests to that path (the URL's pathname, exact match); other
 * paths get an empty 404, untouched by the receiver. Default: every request is a webhook request.
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID` at construction.
 * @example
 * ```ts
 * // app/webhooks/jobs/route.ts (Next.js)
 * const handler = createFetchHandler({ publicKeys: process.env.SERVICE_PUBLIC_KEY!, onEvent: saveJob });
 * export const POST = handler;
 * ```
 */
export function createFetchHandler(receiverOrOptions: ReceiverOrOptions, options?: AdapterOptions): FetchWebhookHandler {
  const receiver = resolveReceiver(receiverOrOptions, 'createFetchHandler');
  const path = adapterPath(options, 'createFetchHandler');
  const view = adapterView(receiver);
  const limitBytes = view.maxBodyBytes;

  async function jobhookFetchHandler(request: Request): Promise<Response> {
    if (path !== undefined && new URL(request.url).pathname !== path) return new Response(null, { status: 404 });
    // The checks that need no body come first: a refused request's body is left unread (what becomes
    // of it, and of the connection, is the runtime's: a Response has no connection to close).
    let answer = view.precheck({ method: request.method, headers: request.headers });
    if (answer === undefined) {
      try {
        const rawBody = await readCappedBody(request, limitBytes, () => bodyReadError({ status: 413 }, limitBytes));
        answer = await receiver.handle({ method: request.method, headers: request.headers, rawBody });
      } catch (err) {
        answer = view.reject(bodyReadError(err, limitBytes));
      }
    }
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  }
  return Object.assign(jobhookFetchHandler, { receiver });
}
