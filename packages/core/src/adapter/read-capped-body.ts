import { contentLength } from '../http/request-headers.js';
import { onLimitDeadline, type BodyLimit } from './body-limit.js';

/**
 * The body of a Fetch-API `Request` or `Response`, at most `maxBytes`: a body that grows past
 * `maxBytes` while streaming is cancelled there, so a misbehaving peer cannot make this process
 * buffer without bound. `tooLarge` makes the error thrown; errors of the stream itself are passed
 * on. When the deadline passes first (an admission's `onDeadline`, else `signal`), the body is
 * cancelled and the reason thrown.
 *
 * `limit` is `maxBytes`, the message's own larger `Content-Length` then refused before reading; or
 * an admission (any {@link BodyLimit}): its `maxBytes` (the declared length, which the precheck
 * held to the limit already, so the header is not read again) and deadline, each chunk charged as
 * it arrives (`charge`), a refused charge cancelling the body and thrown.
 *
 * @example
 * ```ts
 * const bytes = await readCappedBody(response, 64 * 1024 * 1024, () => new Error('answer too large'));
 * ```
 */
export async function readCappedBody(
  message: { readonly headers: Headers; readonly body: ReadableStream<Uint8Array> | null },
  limit: BodyLimit | number,
  tooLarge: () => Error,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const given = typeof limit === 'number' ? undefined : limit;
  const maxBytes = given === undefined ? (limit as number) : given.maxBytes;
  // The deadline's reason once it has passed: a cancelled read ends like a finished one, this says which it was.
  let expired: { reason: unknown } | undefined;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const unsubscribe = onLimitDeadline(given, signal, (reason) => {
    expired = { reason };
    void reader?.cancel(reason).catch(() => {});
  });
  try {
    if (expired !== undefined) throw expired.reason;
    // Only for a bare `maxBytes`: an admission's `maxBytes` is the declared length itself, the head
    // stage (`receiver.precheck`) having refused a larger one, so the check would never trigger.
    if (given === undefined && (contentLength(message.headers.get('content-length') ?? undefined) ?? 0) > maxBytes) {
      await message.body?.cancel().catch(() => {});
      throw tooLarge();
    }
    if (message.body === null) return new Uint8Array(0);
    reader = message.body.getReader();
    return await readAll(reader);
  } finally {
    unsubscribe();
  }

  async function readAll(from: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await from.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await from.cancel().catch(() => {});
        throw tooLarge();
      }
      const refused = given?.charge?.(value.byteLength);
      if (refused !== undefined) {
        await from.cancel(refused).catch(() => {});
        throw refused;
      }
      chunks.push(value);
    }
    if (expired !== undefined) throw expired.reason;
    if (chunks.length === 1) return chunks[0]!;
    const body = new Uint8Array(total);
    let at = 0;
    for (const chunk of chunks) {
      body.set(chunk, at);
      at += chunk.byteLength;
    }
    return body;
  }
}
