import { JobhookError } from '../errors.js';

/**
 * Maps a body-reading failure (raw-body's `entity.too.large`, `request.aborted`,
 * `request.size.invalid`; Fastify's `FST_ERR_CTP_BODY_TOO_LARGE`; anything with a 413 status) to the
 * pipeline's error, for `admission.refuse(...)`.
 */
export function bodyReadError(err: unknown, limitBytes: number): JobhookError {
  if (err instanceof JobhookError) return err;
  const e = (err ?? {}) as { type?: unknown; code?: unknown; status?: unknown; statusCode?: unknown; message?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (e.type === 'entity.too.large' || e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) {
    return new JobhookError('ERR_BODY_TOO_LARGE', `body larger than the limit of ${limitBytes} bytes`, { cause: err });
  }
  const why = typeof e.message === 'string' ? e.message : 'the body could not be read';
  return new JobhookError('ERR_BODY_INCOMPLETE', `request body incomplete: ${why}`, { cause: err });
}
