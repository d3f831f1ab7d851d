import type { Readable } from 'node:stream';
import { JobhookError } from '../errors.js';
import { contentLength } from '../http/request-headers.js';
import { onLimitDeadline, type BodyLimit } from './body-limit.js';

/**
 * Reads a Node request body (an `IncomingMessage`, or the stream a framework hands its body
 * parsers) whole, at most `maxBytes`: it fails as soon as more arrive, without reading the rest.
 * Each chunk is charged to the admission's budget as it arrives (`charge`); a refused charge stops
 * the read and is thrown. When the deadline passes first (the admission's `onDeadline`, else
 * `signal`), reading stops and its reason is thrown.
 * On failure the stream is left paused and unread: answer with the connection closed.
 *
 * `limit` is an admission (or any {@link BodyLimit}): its `maxBytes`, deadline and `declaredBytes`,
 * the `Content-Length` the precheck read, so the header is not read again. A number is `maxBytes`,
 * the stream's own `Content-Length` then read from its `headers`.
 *
 * @example
 * ```ts
 * const { refusal, admission } = receiver.precheck({ method: req.method, headers: req.headers });
 * if (admission !== undefined) answer = await admission.receive(await readNodeBody(req, admission));
 * ```
 * @throws JobhookError `ERR_BODY_TOO_LARGE` past `maxBytes`; `ERR_BODY_INCOMPLETE` when the stream
 * fails or closes before its end (client aborted); the deadline's reason (`ERR_BODY_TIMEOUT`); a
 * refused charge (`ERR_RECEIVER_BUSY`).
 */
export function readNodeBody(stream: Readable, limit: BodyLimit | number, signal?: AbortSignal): Promise<Uint8Array> {
  const given = typeof limit === 'number' ? undefined : limit;
  const maxBytes = given === undefined ? (limit as number) : given.maxBytes;
  return new Promise<Uint8Array>((resolve, reject) => {
    // The deadline first: one already passed is the answer, whatever the stream's state, and the
    // stream is left as it is (nothing was read from it).
    let expired: { reason: unknown } | undefined;
    let stopReading = (reason: unknown): void => {
      expired = { reason };
    };
    const unsubscribe = onLimitDeadline(given, signal, (reason) => stopReading(reason));
    if (expired !== undefined) {
      reject(expired.reason);
      return;
    }
    if (stream.readableEnded) {
      unsubscribe();
      reject(new JobhookError('ERR_BODY_INCOMPLETE', 'request body incomplete: the stream was already read to its end'));
      return;
    }
    // A request's own Content-Length: Node's parser never hands over more, but another stream may.
    const declared = given === undefined ? ownDeclaredLength(stream) : given.declaredBytes;
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = (err: unknown): void => {
      cleanup();
      stream.pause();
      reject(err);
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += bytes.length;
      if (declared !== undefined && total > declared) {
        stop(new JobhookError('ERR_BODY_INCOMPLETE', `request body incomplete: more bytes than its Content-Length (${declared})`));
        return;
      }
      if (total > maxBytes) {
        stop(new JobhookError('ERR_BODY_TOO_LARGE', `body larger than the limit of ${maxBytes} bytes`));
        return;
      }
      // Charged as it arrives: a body that announces much and sends little holds little.
      const refused = given?.charge?.(bytes.length);
      if (refused !== undefined) {
        stop(refused);
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = (): void => {
      if (declared !== undefined && total !== declared) {
        stop(new JobhookError('ERR_BODY_INCOMPLETE', `request body incomplete: ${total} bytes of a Content-Length of ${declared}`));
        return;
      }
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    };
    const onError = (err: unknown): void => {
      const why = err instanceof Error ? err.message : 'the body could not be read';
      stop(new JobhookError('ERR_BODY_INCOMPLETE', `request body incomplete: ${why}`, { cause: err }));
    };
    const onClose = (): void => onError(new Error('the connection closed before the body ended'));
    function cleanup(): void {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      unsubscribe();
    }
    stopReading = stop;
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** A request's own `Content-Length`, for a caller that has not read it. */
function ownDeclaredLength(stream: Readable): number | undefined {
  const value = (stream as { headers?: Record<string, unknown> }).headers?.['content-length'];
  return typeof value === 'string' ? contentLength(value) : undefined;
}
