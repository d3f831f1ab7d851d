import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { JobhookError, type AdapterOptions, type Receiver, type ReceiverOrOptions, type ReceiverResponse } from '@jobhook/core';
import { adapterPath, adapterView, bodyLeftUnread, resolveReceiver } from '@jobhook/core/adapter';
import { readRequestBody } from './read-request-body.js';
import './jobhook-locals.js'; // the `res.locals.jobhook` declaration

const ADAPTER = '@jobhook/express';

/** The middleware, with the receiver it runs (for `stats()` and `close()`). */
export type ExpressWebhookMiddleware = RequestHandler & { readonly receiver: Receiver };

/** Options of {@link createExpressMiddleware}: `path` (exact `req.path`; other paths go on to `next()`). */
export type ExpressMiddlewareOptions = AdapterOptions;

function writeAnswer(res: ServerResponse, { status, headers, body }: ReceiverResponse): void {
  // Node's own writeHead/end: no ETag or charset rewriting by res.send; headers set earlier are kept.
  res.writeHead(status, headers).end(body);
}

/**
 * Creates Express middleware (Express 5 and 4) that receives the service's signed webhooks: it runs
 * the checks that need no body (method, content type, declared length, signature header) and answers
 * a refusal without reading the body; otherwise it reads the raw body (limited to the receiver's
 * `maxBodyBytes` while streaming), runs the core receive pipeline (verify, dedupe by `job_id`, your
 * handler) and writes its answer. A webhook request ends here: it never calls `next`, not even with
 * an error. Once the signature verified, `res.locals.jobhook` is `{ event, outcome }`, whatever the
 * answer.
 *
 * Mount it before any JSON body parser, or keep the bytes with `express.json({ verify: captureRawBody })`.
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
  const view = adapterView(receiver);
  const limitBytes = view.maxBodyBytes;

  async function receive(req: Request): Promise<ReceiverResponse> {
    // The checks that need no body (method, content type, declared length, signature header) come
    // first: a refused request's body is never read, and an announced one left unread closes the connection.
    const refused = view.precheck({ method: req.method, headers: req.headers });
    if (refused !== undefined) {
      if (bodyLeftUnread(req)) refused.headers['connection'] = 'close';
      return refused;
    }
    try {
      const rawBody = await readRequestBody(req, limitBytes);
      return await view.handle({ method: req.method, headers: req.headers, rawBody });
    } catch (err) {
      const error = err instanceof JobhookError ? err : new JobhookError('ERR_INTERNAL', `internal error in ${ADAPTER}`, { cause: err });
      const answer = view.reject(error);
      // The rest of a refused body (413, aborted) is not read: close the connection after the answer.
      if (!req.complete) answer.headers['connection'] = 'close';
      return answer;
    }
  }

  async function respond(req: Request, res: Response): Promise<void> {
    const answer = await receive(req);
    // `locals` is Express's; connect-style servers calling (req, res, next) may not have it.
    if (answer.event !== undefined && typeof res.locals === 'object') {
      res.locals.jobhook = { event: answer.event, outcome: answer.outcome };
    }
    writeAnswer(res, answer);
  }

  function jobhookExpressMiddleware(req: Request, res: Response, next: NextFunction): void {
    // `req.path` is Express's; fall back to the URL for connect-style servers.
    if (path !== undefined && (req.path ?? new URL(req.url ?? '/', 'http://x').pathname) !== path) {
      next();
      return;
    }
    respond(req, res).catch(() => {
      // Only writing the answer can fail here (headers already sent, socket gone): end the exchange.
      res.destroy();
    });
  }

  return Object.assign(jobhookExpressMiddleware, { receiver });
}
