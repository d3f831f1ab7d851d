// The job app's error answers: one JSON shape, `{ "error": { "code", "message" } }` (the receiver's
// shape), a stable code per cause, and messages of the app's own making only: what the service or
// the database said goes to the log, never to the caller.

/** A refusal the app answers as it is: its status, code and message reach the caller. */
export class AppError extends Error {
  /**
   * @param {number} status HTTP status
   * @param {string} code stable code, e.g. `ERR_REQUEST_INVALID`
   * @param {string} message the app's own text (never the service's or the database's)
   * @example throw new AppError(400, 'ERR_REQUEST_INVALID', 'model must be a string');
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Writes `error` as the JSON error answer. */
export function sendError(reply, error) {
  return reply.code(error.status).send({ error: { code: error.code, message: error.message } });
}

/**
 * Fastify's error handler for both listeners: an AppError is answered as it is; Fastify's own 4xx
 * (a body that is not JSON, too large, a wrong content type) as `ERR_REQUEST_INVALID` with its fixed
 * text; anything else is logged with the request id and answered 500 `ERR_INTERNAL` without its text.
 */
export function errorHandler(log) {
  return function answerError(err, request, reply) {
    if (err instanceof AppError) return sendError(reply, err);
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) return sendError(reply, new AppError(status, 'ERR_REQUEST_INVALID', err.message));
    log({ level: 'error', msg: 'request failed', request_id: request.id, route: request.routeOptions?.url, err: err.message });
    return sendError(reply, new AppError(500, 'ERR_INTERNAL', `the app failed; its log has request ${request.id}`));
  };
}

/** Fastify's not-found handler for both listeners: 404 `ERR_NOT_FOUND` in the same JSON shape. */
export function notFound(_request, reply) {
  return sendError(reply, new AppError(404, 'ERR_NOT_FOUND', 'no such route'));
}
