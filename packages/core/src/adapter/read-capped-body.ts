/**
 * The body of a Fetch-API `Request` or `Response`, at most `maxBytes`: a larger `Content-Length` is
 * refused before reading, and a body that grows past `maxBytes` while streaming is cancelled there,
 * so a misbehaving peer cannot make this process buffer without bound. `tooLarge` makes the error
 * thrown in both cases; errors of the stream itself are passed on.
 *
 * @example
 * ```ts
 * const bytes = await readCappedBody(response, 64 * 1024 * 1024, () => new Error('answer too large'));
 * ```
 */
export async function readCappedBody(
  message: { readonly headers: Headers; readonly body: ReadableStream<Uint8Array> | null },
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Uint8Array> {
  const declared = message.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    await message.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (message.body === null) return new Uint8Array(0);
  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}
