import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  JobhookError,
  resolveReceiver,
  type AsyncJobCompletedEvent,
  type Receiver,
  type ReceiverOrOptions,
  type ReceiverResponse,
} from '@jobhook/core';
import { bodyLeftUnread, readRequestBody } from './read-request-body.js';

declare global {
  // Express's own extension point: `res.locals` is typed `Express.Locals`.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /**
       * The verified webhook event, set by `@jobhook/express` when it answered 200 (handled now or a
       * duplicate), for code that runs when the response finishes (access logs, metrics).
       */
      jobhookEvent?: AsyncJobCompletedEvent;
    }
  }
}

/** The middleware, with the receiver it runs (for `stats()` and `close()`). */
export type ExpressWebhookMiddleware = RequestHandler & { readonly receiver: Receiver };

function writeAnswer(res: ServerResponse, { status, headers, body }: ReceiverResponse): void {
  // Node's own writeHead/end: no ETag or charset rewriting by res.send; headers set earlier are kept.
  res.writeHead(status, headers).end(body);
}

/**
 * Creates Express middleware (Express 5 and 4) that receives the service's signed webhooks: it runs
 * the checks that need no body (`receiver.precheck`: method, content type, declared length, signature
 * header) and answers a refusal without reading the body; otherwise it reads the raw body (limited to
 * `receiver.maxBodyBytes` while streaming), runs the core receive pipeline
 * (verify, dedupe by `job_id`, your handler) and writes its answer. It always answers; it never calls
 * `next`, not even with an error. On a 200 the verified event is on `res.locals.jobhookEvent`.
 *
 * Mount it before any JSON body parser, or keep the bytes with `express.json({ verify: captureRawBody })`.
 *
 * @param receiverOrOptions a `Receiver` from `createReceiver`, or the options to create one.
 * @throws JobhookError `ERR_OPTION_INVALID` / `ERR_KEY_INVALID` at construction.
 * @example
 * ```ts
 * app.post('/webhooks/jobs', createExpressMiddleware({
 *   publicKeys: readFileSync('service-public.pem'),
 *   onSuccess: async (event) => saveResult(event.job_id, event.output),
 * }));
 * ```
 */
export function createExpressMiddleware(receiverOrOptions: ReceiverOrOptions): ExpressWebhookMiddleware {
  const receiver = resolveReceiver(receiverOrOptions, '@jobhook/express');
  const limitBytes = receiver.maxBodyBytes;

  async function receive(req: Request): Promise<ReceiverResponse> {
    // The checks that need no body (method, content type, declared length, signature header) come
    // first: a refused request's body is never read, and an announced one left unread closes the connection.
    const refused = receiver.precheck({ method: req.method, headers: req.headers });
    if (refused !== undefined) {
      if (bodyLeftUnread(req)) refused.headers['connection'] = 'close';
      return refused;
    }
    try {
      const rawBody = await readRequestBody(req, limitBytes);
      return await receiver.handle({ method: req.method, headers: req.headers, rawBody });
    } catch (err) {
      const error = err instanceof JobhookError ? err : new JobhookError('ERR_INTERNAL', 'internal error in @jobhook/express', { cause: err });
      const answer = receiver.reject(error);
      // The rest of a refused body (413, aborted) is not read: close the connection after the answer.
      if (!req.complete) answer.headers['connection'] = 'close';
      return answer;
    }
  }

  async function respond(req: Request, res: Response): Promise<void> {
    const answer = await receive(req);
    const { kind } = answer.outcome;
    // `locals` is Express's; connect-style servers calling (req, res, next) may not have it.
    if (answer.event !== undefined && (kind === 'handled' || kind === 'duplicate') && typeof res.locals === 'object') {
      res.locals.jobhookEvent = answer.event;
    }
    writeAnswer(res, answer);
  }

  function jobhookExpressMiddleware(req: Request, res: Response, _next: NextFunction): void {
    respond(req, res).catch(() => {
      // Only writing the answer can fail here (headers already sent, socket gone): end the exchange.
      res.destroy();
    });
  }

  return Object.assign(jobhookExpressMiddleware, { receiver });
}
