import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { optionError } from '../internal/option-checks.js';
import { resolveSendOptions, type ResolvedSendOptions } from './diagnosis-option-checks.js';

/** What a recording says the receiver answered. */
export interface RecordingOutcome {
  /** HTTP status answered. */
  status: number;
  /** The outcome kind (`handled`, `duplicate`, `rejected`, ...). */
  kind: string;
  /** The error code, when the answer was not a 2xx. */
  code?: string;
  /** The job, once the payload verified as an event. */
  jobId?: string;
}

/** One delivery as `record` kept it, ready to send again. */
export interface Recording {
  method: string;
  /**
   * The headers whose values were kept (the service's, with the signature, `Content-Type`,
   * `Content-Length`, `User-Agent`), by lower-case name; headers kept by name only (`[dropped]`)
   * are left out, so a replay never sends a placeholder.
   */
  headers: Record<string, string | string[]>;
  /** The body, byte for byte. */
  body: Buffer;
  /** When the delivery arrived: pin the clock here to replay it as it was judged. */
  arrivedAt: Date;
  /** What the receiver answered then. */
  outcome: RecordingOutcome;
}

/** The value a request file writes for a header it keeps by name only. */
const DROPPED = '[dropped]';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Reads a recording from its file's text (`record` of `createReceiver` writes them).
 *
 * @example
 * ```ts
 * const recording = parseRecording(readFileSync('recordings/delivery-2026-11-28T12-00-00-000Z-1a2b3c4d.json', 'utf8'));
 * ```
 * @param owner the caller named in the error (`loadRecording`, `jobhook replay`).
 * @throws JobhookError `ERR_OPTION_INVALID` saying what is wrong: not JSON, a capture of a refused
 *   request (no `arrived_at`), a body left out (`body_omitted`), a bad member.
 */
export function parseRecording(text: string, owner = 'parseRecording'): Recording {
  const fail = (why: string): never => {
    throw optionError(owner, `not a recording: ${why}`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    fail('the file is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('a recording is a JSON object');
  const file = value as Record<string, unknown>;
  const { method = 'POST', headers, body_b64: bodyB64, arrived_at: arrivedAt, status, kind, code, job_id: jobId } = file;
  if (typeof arrivedAt !== 'string' || Number.isNaN(Date.parse(arrivedAt))) {
    fail('it has no "arrived_at" (a captureFailures capture of a refused request? `jobhook doctor --request` reads those)');
  }
  if (typeof file['body_omitted'] === 'number') fail(`its body (${file['body_omitted']} bytes) was left out, over record.maxBodyBytes`);
  if (typeof method !== 'string') fail('"method" must be a string');
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) fail('"headers" must be an object');
  if (typeof bodyB64 !== 'string' || !BASE64.test(bodyB64)) fail('"body_b64" must be the body in base64');
  if (!Number.isSafeInteger(status) || typeof kind !== 'string') fail('"status" and "kind" must say what was answered');
  const kept: Record<string, string | string[]> = {};
  for (const [name, v] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof v === 'string') {
      if (v !== DROPPED) kept[name.toLowerCase()] = v;
    } else if (Array.isArray(v) && v.every((item) => typeof item === 'string')) {
      const values = v.filter((item) => item !== DROPPED);
      if (values.length > 0) kept[name.toLowerCase()] = values;
    } else {
      fail(`header ${JSON.stringify(name)} must be a string or an array of strings`);
    }
  }
  return {
    method: method as string,
    headers: kept,
    body: Buffer.from(bodyB64 as string, 'base64'),
    arrivedAt: new Date(arrivedAt as string),
    outcome: {
      status: status as number,
      kind: kind as string,
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof jobId === 'string' ? { jobId } : {}),
    },
  };
}

/** A receiver's answer to a replayed recording. */
export interface ReplayAnswer {
  status: number;
  /** The error code of a refusal (`{"error":{"code"}}`), else undefined. */
  code: string | undefined;
  /** The job the answer names (`job_id`), else undefined. */
  jobId: string | undefined;
  /** True when the receiver said the job was handled before. */
  duplicate: boolean;
  /** The answer's body (its first 64 KiB). */
  body: string;
}

/** The most of an answer's body read. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Sends a recording to `url` as it came: the same method, the same kept headers (signature and all)
 * and the same body bytes, over `node:http(s)` (no header added but `Host`; no `Transfer-Encoding`).
 *
 * @example
 * ```ts
 * const answer = await sendRecording('http://127.0.0.1:3000/webhooks/jobs', recording);
 * console.log(answer.status, answer.code ?? (answer.duplicate ? 'duplicate' : 'handled'));
 * ```
 * @param options.timeoutMs give up after this long without an answer. Default 30000.
 * @throws Error when the connection fails or times out (no answer to report); JobhookError
 *   `ERR_OPTION_INVALID` (a rejection too) for a `url` that is not http(s) or a bad `timeoutMs`.
 */
export function sendRecording(url: string | URL, recording: Recording, options: { timeoutMs?: number } = {}): Promise<ReplayAnswer> {
  let resolved: ResolvedSendOptions;
  try {
    resolved = resolveSendOptions(url, options);
  } catch (err) {
    // Every failure comes as a rejection, a bad option too: the caller has one place to catch.
    return Promise.reject(err);
  }
  const { target, timeoutMs } = resolved;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string | string[]> = { ...recording.headers, 'content-length': String(recording.body.length) };
  return new Promise((resolve, reject) => {
    const req = send(target, { method: recording.method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body, ...answerFields(body) });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${target.origin} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(recording.body);
  });
}

/** The code, job id and duplicate flag of a jobhook answer's JSON, when it is one. */
function answerFields(body: string): Pick<ReplayAnswer, 'code' | 'jobId' | 'duplicate'> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { code: undefined, jobId: undefined, duplicate: false };
  }
  const answer = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const error = answer['error'] as Record<string, unknown> | undefined;
  return {
    code: typeof error?.['code'] === 'string' ? error['code'] : undefined,
    jobId: typeof answer['job_id'] === 'string' ? answer['job_id'] : undefined,
    duplicate: answer['duplicate'] === true,
  };
}
