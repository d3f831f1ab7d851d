// What a caller may ask of the app, checked field by field: `POST /jobs` takes `model` and `input`
// and nothing else (the app sets `webhook_receiver` itself; `user_webhook_parameters`, where the
// recipient tag goes, is the app's alone), and `GET /jobs/:id` takes a job id.
import { AppError } from './app-answers.mjs';

/** Largest `POST /jobs` body, bytes: Fastify refuses a longer one (413) before parsing it. */
export const MAX_JOB_BODY_BYTES = 32 * 1024;
/** Largest `input`, as JSON text. */
export const MAX_INPUT_JSON_CHARS = 16 * 1024;
/** Deepest nesting of objects and arrays in `input`. */
export const MAX_INPUT_DEPTH = 8;

/** `<feature>/<subfeature>/<provider>[/<provider model>]`, as the service's spec shapes it (§4.2). */
const MODEL = /^[a-z0-9][a-z0-9_.-]{0,63}\/[a-z0-9][a-z0-9_.-]{0,63}\/[a-z0-9][a-z0-9_.-]{0,63}(\/[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,127})?$/;
const JOB_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const FIELDS = new Set(['model', 'input']);

const invalid = (message) => new AppError(400, 'ERR_REQUEST_INVALID', message);
const isPlainObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when `value` nests objects and arrays deeper than `left` levels (stops as soon as it knows). */
function tooDeep(value, left) {
  if (typeof value !== 'object' || value === null) return false;
  if (left === 0) return true;
  for (const member of Object.values(value)) if (tooDeep(member, left - 1)) return true;
  return false;
}

/**
 * The submission the app makes of a `POST /jobs` body: `{ model, input }`, new objects holding only
 * those two. Any other field is refused rather than dropped, so a caller learns it was not sent.
 * @throws AppError 400 `ERR_REQUEST_INVALID` naming the field at fault
 * @example readJobRequest({ model: 'ocr/ocr_async/amazon', input: { file: 'https://…' } })
 */
export function readJobRequest(body) {
  if (!isPlainObject(body)) throw invalid('the body must be a JSON object: { "model": "...", "input": { ... } }');
  for (const field of Object.keys(body)) {
    if (!FIELDS.has(field)) throw invalid(`${JSON.stringify(field.slice(0, 64))} is not a field the app takes: send model and input only`);
  }
  const { model, input } = body;
  if (typeof model !== 'string' || !MODEL.test(model)) {
    throw invalid('model must be a string shaped <feature>/<subfeature>/<provider>[/<provider model>] (a-z 0-9 _ . -)');
  }
  if (!isPlainObject(input)) throw invalid('input must be a JSON object');
  if (tooDeep(input, MAX_INPUT_DEPTH)) throw invalid(`input nests deeper than ${MAX_INPUT_DEPTH} levels`);
  if (JSON.stringify(input).length > MAX_INPUT_JSON_CHARS) throw invalid(`input is longer than ${MAX_INPUT_JSON_CHARS} characters as JSON`);
  return { model, input };
}

/**
 * The job id of `GET /jobs/:id`, in lower case (as the receiver keys jobs).
 * @throws AppError 400 `ERR_REQUEST_INVALID` unless it is a UUID
 */
export function readJobId(id) {
  if (typeof id !== 'string' || !JOB_ID.test(id)) throw invalid('the job id must be a UUID');
  return id.toLowerCase();
}
