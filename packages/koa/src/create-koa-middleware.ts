import type { IncomingMessage } from 'node:http';
import type { Middleware, ParameterizedContext } from 'koa';
import getRawBody from 'raw-body';
import {
  JobhookError,
  bodyAlreadyParsedError,
  bodyReadError,
  resolveReceiver,
  type AsyncJobCompletedEvent,
  type Receiver,
  type ReceiverOrOptions,
  type ReceiverResponse,
} from '@jobhook/core';

const ADAPTER = '@jobhook/koa';

const PARSED_FIX =
  'keep the raw body on ctx.request.rawBody (koa-bodyparser and @koa/bodyparser do), ' +
  'mount the jobhook middleware before the body parser, or skip the body parser on the webhook path';

/** What the middleware adds to `ctx.state`. */
export interface JobhookState {
  /** The verified event, set when the answer is 200 (handled now, or a duplicate). */
  jobhookEvent?: AsyncJobCompletedEvent;
}

/** The middleware, with the receiver it runs (for `stats()` and `close()`). */
export type KoaWebhookMiddleware = Middleware<JobhookState> & { readonly receiver: Receiver };

/** Options of {@link createKoaMiddleware}. */
export interface KoaMiddlewareOptions {
  /**
   * The webhook path (`ctx.path`, exact match). Requests to other paths go on to `next()`.
   * Default: none, every request that reaches the middleware is a webhook request (mount it with
   * `@koa/router` or koa-mount).
   */
  path?: string;
}

/**
 * Creates the Koa middleware that receives the signed `async_job_completed` webhooks: it runs the
 * checks that need no body (`receiver.precheck`) and answers a refusal without reading the body;
 * otherwise it reads the raw body (at most `receiver.maxBodyBytes`, refused while streaming), runs
 * the core pipeline and writes its answer. A webhook request ends here: `next()` is not called for
 * it. On 200 the verified event is on `ctx.state.jobhookEvent` for middleware mounted before this one
 * (after `await next()`).
 *
 * A body parser mounted before it is fine when it keeps `ctx.request.rawBody` (koa-bodyparser and
 * @koa/bodyparser do); one that consumed the body without keeping it gets a 500
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
export function createKoaMiddleware(receiverOrOptions: ReceiverOrOptions, options: KoaMiddlewareOptions = {}): KoaWebhookMiddleware {
  const receiver = resolveReceiver(receiverOrOptions, ADAPTER);
  const path = checkPath(options);
  const jobhookKoaMiddleware: Middleware<JobhookState> = async function jobhookKoaMiddleware(ctx, next) {
    if (path !== undefined && ctx.path !== path) return next();
    const answer = await receive(receiver, ctx);
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body; // after the headers, so Koa keeps our Content-Type
    if (answer.status === 200 && answer.event !== undefined) ctx.state.jobhookEvent = answer.event;
  };
  return Object.assign(jobhookKoaMiddleware, { receiver });
}

async function receive(receiver: Receiver, ctx: ParameterizedContext<JobhookState>): Promise<ReceiverResponse> {
  const { req } = ctx;
  // The checks that need no body come first: a refused request's body is never read.
  const refused = receiver.precheck({ method: ctx.method, headers: ctx.headers });
  if (refused !== undefined) {
    if (bodyLeftUnread(req)) ctx.set('connection', 'close');
    return refused;
  }
  const kept = (ctx.request as { rawBody?: unknown }).rawBody;
  let rawBody: Uint8Array | string;
  if (typeof kept === 'string' || kept instanceof Uint8Array) {
    // A body parser kept the text: its UTF-8 bytes are the body for any valid UTF-8 body.
    rawBody = kept;
  } else if (req.readableDidRead || req.readableEnded) {
    return receiver.reject(bodyAlreadyParsedError(ADAPTER, PARSED_FIX));
  } else {
    try {
      rawBody = await getRawBody(req, { limit: receiver.maxBodyBytes, length: ctx.request.length ?? null });
    } catch (err) {
      // Stop an unread upload (a 50 MB body) instead of keeping the connection for it.
      if (!req.complete) ctx.set('connection', 'close');
      return receiver.reject(bodyReadError(err, receiver.maxBodyBytes));
    }
  }
  return receiver.handle({ method: ctx.method, headers: ctx.headers, rawBody });
}

/** True when the request announced a body (`Content-Length` above 0, or chunked) that has not arrived in full. */
function bodyLeftUnread(req: IncomingMessage): boolean {
  if (req.complete || req.readableEnded) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function checkPath(options: KoaMiddlewareOptions): string | undefined {
  if (typeof options !== 'object' || options === null) {
    throw new JobhookError('ERR_OPTION_INVALID', `${ADAPTER}: options must be an object, got ${String(options)}`);
  }
  const { path } = options;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    throw new JobhookError('ERR_OPTION_INVALID', `${ADAPTER}: path must be a string starting with "/", got ${JSON.stringify(path)}`);
  }
  return path;
}
