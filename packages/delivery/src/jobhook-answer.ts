/**
 * What a jobhook receiver answers (`@jobhook/core`'s `createReceiver`): the one answer body the
 * deliveries log keeps. Anything else a receiver answers is logged as status and length only, so
 * the log cannot read back what an internal service answered (an SSRF read-back).
 */
export type JobhookAnswer = { ok: true; job_id: string; duplicate: boolean } | { error: { code: string; message: string } };

/** Largest answer body that can be a {@link JobhookAnswer}. */
export const MAX_JOBHOOK_ANSWER_BYTES = 1024;
/** Longest `error.message` of a {@link JobhookAnswer}, in characters. */
export const MAX_JOBHOOK_MESSAGE_CHARS = 500;

const CODE = /^ERR_[A-Z_]{1,60}$/;
// C0 controls and DEL: jobhook's messages are single lines of text.
const CONTROL = /[\u0000-\u001f\u007f]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasExactly(value: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((k) => Object.hasOwn(value, k));
}

/**
 * `body` as a {@link JobhookAnswer}, rebuilt from its checked members, or `null` when it is not
 * exactly one: a complete body of at most 1 KB of UTF-8 JSON that is either
 * `{ "ok": true, "job_id": <this job's id>, "duplicate": <boolean> }` or
 * `{ "error": { "code": "ERR_…" (A-Z and _), "message": <a string of at most 500 characters, no control characters> } }`,
 * with no other member at either level.
 */
export function readJobhookAnswer(body: Buffer, complete: boolean, jobId: string): JobhookAnswer | null {
  if (!complete || body.length === 0 || body.length > MAX_JOBHOOK_ANSWER_BYTES) return null;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(body));
  } catch {
    return null;
  }
  if (!isPlainObject(value)) return null;
  if (hasExactly(value, ['ok', 'job_id', 'duplicate'])) {
    const { ok, job_id: id, duplicate } = value;
    if (ok !== true || id !== jobId || typeof duplicate !== 'boolean') return null;
    return { ok: true, job_id: id, duplicate };
  }
  if (!hasExactly(value, ['error']) || !isPlainObject(value['error'])) return null;
  const error = value['error'];
  if (!hasExactly(error, ['code', 'message'])) return null;
  const { code, message } = error;
  if (typeof code !== 'string' || !CODE.test(code)) return null;
  if (typeof message !== 'string' || message.length > MAX_JOBHOOK_MESSAGE_CHARS || CONTROL.test(message)) return null;
  return { error: { code, message } };
}
