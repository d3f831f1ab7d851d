// The app's token check: `Authorization: Bearer <JOB_APP_TOKEN>` on every route that submits or shows
// jobs. Both sides are hashed (SHA-256) before timingSafeEqual, so the comparison takes the same time
// whatever the token given, its length included.
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError, sendError } from './app-answers.mjs';

const digest = (text) => createHash('sha256').update(text, 'utf8').digest();
const SCHEME = /^Bearer +/i;

/**
 * A Fastify `onRequest` hook that answers 401 `ERR_UNAUTHORIZED` unless the request carries `token`.
 * It runs before the body is read: an anonymous request costs a hash of its header and no more.
 * @example app.post('/jobs', { onRequest: requireToken(config.token) }, handler);
 */
export function requireToken(token) {
  const expected = digest(token);
  const refusal = new AppError(401, 'ERR_UNAUTHORIZED', 'send the app token: Authorization: Bearer <JOB_APP_TOKEN>');
  return async function checkToken(request, reply) {
    const header = request.headers.authorization;
    const given = typeof header === 'string' && SCHEME.test(header) ? header.replace(SCHEME, '') : undefined;
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return;
    reply.header('www-authenticate', 'Bearer');
    return sendError(reply, refusal);
  };
}
