import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AdapterOptions, Receiver, ReceiverOrOptions, ReceiverResponse } from '@jobhook/core';
import { adapterPath, createReceiveFlow, nodeBodyIo, resolveReceiver, type ReceiveIo } from '@jobhook/core/adapter';
import { keptRequestBody } from './kept-request-body.js';
import './jobhook-locals.js'; // the `res.locals.jobhook` declaration

const ADAPTER = '@jobhook/express';

/** The middleware, with the receiver it runs (for `stats()` and `close()`). */
export type ExpressWebhookMiddleware = RequestHandler & { readonly receiver: Receiver };

/** Options of {@link createExpressMiddleware}: `path` (exact `req.path`; other paths go on to `next()`). */
export type ExpressMiddlewareOptions = AdapterOptions;

/** Express's side of the receive flow: the request's head and body, the answer written on `res`. */
const EXPRESS_IO: ReceiveIo<Request, Response, void> = {
  // `req.ip` honours Express's `trust proxy`; connect-style servers have only the socket's address.
  head: (req) => ({ method: req.method, headers: req.headers, clientAddress: req.ip ?? req.socket?.remoteAddress }),
  ...nodeBodyIo<Request, Response>((req) => req, keptRequestBody),
  respond(answer: ReceiverResponse, _req: Request, res: Response): void {
    // `locals` is Express's; connect-style servers calling (req, res, next) may not have it.
    if (answer.event !== undefined && typeof res.locals === 'object') {
      res.locals.jobhook = { event: answer.event, outcome: answer.outcome };
    }
    // Node's own writeHead/end: no ETag or charset rewriting by res.send; headers set earlier are kept.
    res.writeHead(answer.status, answer.headers).end(answer.body);
  },
};

/**
 * Creates Express middleware (Express 5 and 4) that receives the service's signed webhooks: it runs
 * the checks that need no body (method, content type, declared length, signature header, the RSA
 * recovery of what a configured key signed, a share of `maxBodyBytesInFlight`) and answers a
 * refusal without reading a byte of the body; otherwise it reads the raw body (at most its declared
 * length or `maxBodyBytes`, within `bodyTimeoutMs`), runs the core receive pipeline (verify, dedupe by `job_id`, your
 * handler) and writes its answer. A webhook request ends here: it never calls `next`, not even with
 * an error. Once the signature verified, `res.locals.jobhook` is `{ event, outcome }`, whatever the
 * answer.
 *
 * Mount it before any JSON body parser. `express.json({ verify: captureRawBody })` works too, but
 * that parser reads every body, signed or not, before this middleware can refuse it.
 *
 * @param receiverOrOptions a `Receiver` from `createReceiver`, or the options to create one.
 * @param options `path`: handle only requests whose `req.path` equals it; call `next()` for the others.
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID` at construction.
 * @example
 * ```ts
 * app.post('/webhooks/jobs', createExpressMiddleware({
 *   publicKeys: readFileSync('service-public.pem'),
 *   onSuccess: async (event) => saveResult(event.job_id, event.output),
 * }));
 * ```
 */
export function createExpressMiddleware(
  receiverOrOptions: ReceiverOrOptions,
  options?: ExpressMiddlewareOptions,
): ExpressWebhookMiddleware {
  const receiver = resolveReceiver(receiverOrOptions, ADAPTER);
  const path = adapterPath(options, ADAPTER);

  const flow = createReceiveFlow(receiver, EXPRESS_IO);

  function jobhookExpressMiddleware(req: Request, res: Response, next: NextFunction): void {
    // `req.path` is Express's; fall back to the URL for connect-style servers.
    if (path !== undefined && (req.path ?? new URL(req.url ?? '/', 'http://x').pathname) !== path) {
      next();
      return;
    }
    flow.run(req, res).catch(() => {
      // Only writing the answer can fail here (headers already sent, socket gone): end the exchange.
      res.destroy();
    });
  }

  return Object.assign(jobhookExpressMiddleware, { receiver });
}
