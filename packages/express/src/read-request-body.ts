import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { bodyAlreadyParsedError, bodyReadError, capturedRawBody } from '@jobhook/core/adapter';

/** A request as body parsers may have left it. */
export type ExpressRequestLike = IncomingMessage & { body?: unknown; _body?: unknown };

const ADAPTER = '@jobhook/express';
const FIX =
  'mount the jobhook middleware on its path before express.json() (app.post(path, middleware) above app.use(express.json())), ' +
  'or keep the bytes with express.json({ verify: captureRawBody }) (captureRawBody from @jobhook/express)';

/**
 * The webhook body bytes exactly as received: the ones `captureRawBody` kept, the Buffer of
 * `express.raw()`, or the stream read here with raw-body, which enforces `limitBytes` while
 * streaming (a declared Content-Length over the limit fails before a byte is read).
 * @throws JobhookError `ERR_BODY_ALREADY_PARSED` when a parser consumed the stream and kept no bytes;
 * `ERR_BODY_TOO_LARGE`, `ERR_BODY_INCOMPLETE` when reading fails.
 */
export async function readRequestBody(req: ExpressRequestLike, limitBytes: number): Promise<Uint8Array> {
  const captured = capturedRawBody(req);
  if (captured !== undefined) return captured;
  // body-parser 1.x (Express 4) sets `_body`; any parser that read the stream to its end leaves readableEnded.
  if (req._body === true || req.readableEnded) {
    // express.raw() hands the bytes over as they came; a parsed object or a decoded string is not them.
    if (Buffer.isBuffer(req.body)) return req.body;
    throw bodyAlreadyParsedError(ADAPTER, FIX);
  }
  try {
    return await getRawBody(req, { limit: limitBytes, length: req.headers['content-length'] ?? null });
  } catch (err) {
    if ((err as { type?: unknown }).type === 'stream.not.readable') throw bodyAlreadyParsedError(ADAPTER, FIX);
    throw bodyReadError(err, limitBytes);
  }
}
