import type { IncomingMessage } from 'node:http';
import { bodyAlreadyParsedError, capturedRawBody, type KeptBody } from '@jobhook/core/adapter';

/** A request as body parsers may have left it. */
export type ExpressRequestLike = IncomingMessage & { body?: unknown; _body?: unknown };

const ADAPTER = '@jobhook/express';
const FIX =
  'mount the jobhook middleware on its path before express.json() (app.post(path, middleware) above app.use(express.json())), ' +
  'or keep the bytes with express.json({ verify: captureRawBody }) (captureRawBody from @jobhook/express)';

/**
 * What a body parser mounted earlier left of the webhook body: the bytes `captureRawBody` kept, the
 * Buffer of `express.raw()`, an `ERR_BODY_ALREADY_PARSED` error when a parser consumed the stream
 * and kept no bytes, or `undefined` when the stream is unread (the middleware reads it).
 */
export function keptRequestBody(req: ExpressRequestLike): KeptBody {
  const captured = capturedRawBody(req);
  if (captured !== undefined) return captured;
  // body-parser 1.x (Express 4) sets `_body`; any parser that read the stream to its end leaves readableEnded.
  if (req._body === true || req.readableEnded || req.readableDidRead) {
    // express.raw() hands the bytes over as they came; a parsed object or a decoded string is not them.
    if (Buffer.isBuffer(req.body)) return req.body;
    return bodyAlreadyParsedError(ADAPTER, FIX);
  }
  return undefined;
}
