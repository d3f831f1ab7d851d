import type { Middleware, ParameterizedContext } from 'koa';
import type { AdapterOptions, Receiver, ReceiverOrOptions, ReceiverResponse, VerifiedWebhook } from '@jobhook/core';
import {
  adapterPath,
  bodyAlreadyParsedError,
  createReceiveFlow,
  nodeBodyIo,
  resolveReceiver,
  type KeptBody,
  type ReceiveIo,
} from '@jobhook/core/adapter';

const ADAPTER = '@jobhook/koa';

const PARSED_FIX =
  'keep the raw body on ctx.request.rawBody (koa-bodyparser and @koa/bodyparser do), ' +
  'mount the jobhook middleware before the body parser, or skip the body parser on the webhook path';

/** What the middleware adds to `ctx.state`. */
export interface JobhookState {
  /**
   * Set whenever the webhook's signature verified, whatever the answer (handled, duplicate, in
   * flight, handler failed or slow, store unavailable): the event and the receiver's outcome.
   */
  jobhook?: VerifiedWebhook;
}

/** The middleware, with the receiver it runs (for `stats()` and `close()`). */
export type KoaWebhookMiddleware = Middleware<JobhookState> & { readonly receiver: Receiver };

/**
 * Options of {@link createKoaMiddleware}: `path`, the webhook path (`ctx.path`, exact match); requests
 * to other paths go on to `next()`. Default: none, every request that reaches the middleware is a
 * webhook request (mount it with `@koa/router` or koa-mount).
 */
export type KoaMiddlewareOptions = AdapterOptions;

type KoaContext = ParameterizedContext<JobhookState>;

/** Koa's side of the receive flow: the context's head and body, the answer set on the context. */
const KOA_IO: ReceiveIo<KoaContext, void, void> = {
  // `ctx.ip` honours Koa's `app.proxy` (and `app.proxyIpHeader`).
  head: (ctx) => ({ method: ctx.method, headers: ctx.headers, clientAddress: ctx.ip }),
  ...nodeBodyIo<KoaContext, void>((ctx) => ctx.req, keptBody),
  respond(answer: ReceiverResponse, ctx: KoaContext): void {
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body; // after the headers, so Koa keeps our Content-Type
    if (answer.event !== undefined) ctx.state.jobhook = { event: answer.event, outcome: answer.outcome };
  },
};

/**
 * Creates the Koa middleware that receives the signed `async_job_completed` webhooks: it runs the
 * checks that need no body (the RSA recovery of what a configured key signed among them) and
 * answers a refusal without reading a byte of the body; otherwise it reads the raw body (at most its
 * declared length or `maxBodyBytes`, within `bodyTimeoutMs`), runs the core pipeline
 * and writes its answer. A webhook request ends here: `next()` is not called for it. Once the
 * signature verified, `ctx.state.jobhook` is `{ event, outcome }` (whatever the answer), for
 * middleware mounted before this one (after `await next()`).
 *
 * A body parser mounted before it works when it keeps `ctx.request.rawBody` (koa-bodyparser and
 * @koa/bodyparser do), but it reads every body, signed or not, before this middleware can refuse
 * it: mount this one first. One that consumed the body without keeping it gets a 500
 * `ERR_BODY_ALREADY_PARSED` that says how to fix the setup.
 *
 * @param receiverOrOptions a `Receiver`, or the options of `createReceiver` (checked now).
 * @param options `path`: handle only that path and call `next()` for the others.
 * @returns the middleware, with `.receiver` (for `stats()` and `close()`).
 * @example
 * ```ts
 * app.use(createKoaMiddleware({ publicKeys: pem, onSuccess }, { path: '/webhooks/jobs' }));
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID` at construction.
 */
export function createKoaMiddleware(receiverOrOptions: ReceiverOrOptions, options?: KoaMiddlewareOptions): KoaWebhookMiddleware {
  const receiver = resolveReceiver(receiverOrOptions, ADAPTER);
  const path = adapterPath(options, ADAPTER);
  const flow = createReceiveFlow(receiver, KOA_IO);
  const jobhookKoaMiddleware: Middleware<JobhookState> = async function jobhookKoaMiddleware(ctx, next) {
    if (path !== undefined && ctx.path !== path) return next();
    await flow.run(ctx);
  };
  return Object.assign(jobhookKoaMiddleware, { receiver });
}

/** What a body parser mounted before left: the text it kept on `ctx.request.rawBody`, or the error when it kept none. */
function keptBody(ctx: KoaContext): KeptBody {
  const kept = (ctx.request as { rawBody?: unknown }).rawBody;
  // A body parser kept the text: its UTF-8 bytes are the body for any valid UTF-8 body.
  if (typeof kept === 'string' || kept instanceof Uint8Array) return kept;
  if (ctx.req.readableDidRead || ctx.req.readableEnded) return bodyAlreadyParsedError(ADAPTER, PARSED_FIX);
  return undefined;
}
