import { stringifyJson } from '@jobhook/core/json';
import { optionError } from '@jobhook/core/internal';
import type { SubmitJobRequest } from '../job-types.js';

const WHERE = 'submitJob';

/**
 * The argument of `submitJob` checked and written as JSON text, numbers exact (bigint, RawJson).
 * @throws JobhookError `ERR_OPTION_INVALID` naming what is wrong, before anything is sent.
 * @internal
 */
export function submissionJson(request: SubmitJobRequest): string {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw optionError(WHERE, 'request must be an object with model and input');
  }
  if (typeof request.model !== 'string' || request.model === '') {
    throw optionError(WHERE, 'request.model must be a non-empty string (<feature>/<subfeature>/<provider>)');
  }
  const input: unknown = request.input;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw optionError(WHERE, 'request.input must be an object');
  try {
    return stringifyJson(request);
  } catch (cause) {
    throw optionError(WHERE, `request cannot be written as JSON: ${(cause as Error).message}`, { cause });
  }
}
