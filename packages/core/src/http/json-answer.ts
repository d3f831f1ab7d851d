/** The content type of every answer the receiver writes. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Headers of a JSON answer: a new object each time, since adapters add to it (`Connection: close`).
 * @internal
 */
export function jsonHeaders(extra?: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': JSON_CONTENT_TYPE };
  if (extra !== undefined) Object.assign(headers, extra);
  return headers;
}
