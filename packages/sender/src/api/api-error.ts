/**
 * An error the API answers as `{ "detail": message }` with `statusCode` (spec §7), plus optional
 * headers such as `WWW-Authenticate`. Thrown by routes and hooks, written by the API's error handler.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A 400 naming the field at fault. */
export function badRequest(detail: string): ApiError {
  return new ApiError(400, detail);
}

/** The one 404 answer for unknown, malformed and other organizations' ids alike, so none can be told apart. */
export function notFound(what: 'job' | 'key'): ApiError {
  return new ApiError(404, what === 'job' ? 'job not found' : 'key not found');
}
