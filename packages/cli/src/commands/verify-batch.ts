import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { JsonObject, JsonValue, Verifier } from '@jobhook/core';
import { CliError, describeError } from '../errors.js';
import { jsonLine, write, type CliIo } from '../io.js';

/** Standard or URL-safe base64, padded or not: what a producer of a batch file may reasonably write. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** One output record of `verify --batch`. */
export interface BatchResult {
  id: string | number | null;
  ok: boolean;
  code: string | null;
  profile: string | null;
  job_id: JsonValue;
}

/** The payload's `job_id`, `null` when absent. */
export function jobIdOf(payload: JsonObject): JsonValue {
  return Object.hasOwn(payload, 'job_id') ? (payload['job_id'] ?? null) : null;
}

/**
 * Verifies a JSONL file (or stdin for `-`) line by line with ONE verifier, writing one JSON line per
 * input line in input order (see {@link forEachBatchLine}).
 * @returns 0 once every line is processed; per-line failures are in the output, not the exit code.
 * @throws CliError `ERR_FILE_UNREADABLE` when the batch file cannot be opened.
 */
export async function verifyBatch(verifier: Verifier, source: string, io: CliIo): Promise<number> {
  await forEachBatchLine(source, io, (text) => write(io.stdout, jsonLine(verifyLine(verifier, text))));
  return 0;
}

/**
 * Calls `onLine` for each non-blank line of a JSONL file (or stdin for `-`), in order, waiting for
 * each: the input is streamed and `onLine` writes with backpressure, so memory stays flat whatever
 * the number of lines. Blank lines are skipped (they are not JSONL records); a UTF-8 BOM is dropped.
 * @throws CliError `ERR_FILE_UNREADABLE` when the batch file cannot be opened.
 */
export async function forEachBatchLine(source: string, io: CliIo, onLine: (text: string) => Promise<void>): Promise<void> {
  const input = source === '-' ? io.stdin : await openBatch(source);
  const lines = createInterface({ input, crlfDelay: Infinity });
  let first = true;
  try {
    for await (const raw of lines) {
      // A UTF-8 BOM from an editor would make the first line invalid JSON.
      const text = first ? raw.replace(/^\uFEFF/, '') : raw;
      first = false;
      if (text.trim() === '') continue;
      await onLine(text);
    }
  } finally {
    // Our own file stream must not outlive an aborted run (in-process callers keep going).
    if (input !== io.stdin) input.destroy();
  }
}

/** Opens the batch file first, so a missing file is reported before any output. */
async function openBatch(path: string): Promise<Readable> {
  try {
    return (await open(path, 'r')).createReadStream();
  } catch (cause) {
    throw new CliError('ERR_FILE_UNREADABLE', `cannot read --batch ${path}: ${(cause as Error).message}`, { cause });
  }
}

/** Verifies one input line; never throws, since one bad line must not stop the batch. */
export function verifyLine(verifier: Verifier, text: string): BatchResult {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return lineInvalid(null);
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return lineInvalid(null);
  const { id, body_b64: bodyB64, signature } = record as Record<string, unknown>;
  const echoedId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  if (
    echoedId === null ||
    typeof signature !== 'string' ||
    typeof bodyB64 !== 'string' ||
    !BASE64.test(bodyB64) ||
    bodyB64.replace(/=+$/, '').length % 4 === 1
  ) {
    return lineInvalid(echoedId);
  }
  try {
    const result = verifier.verify({ body: Buffer.from(bodyB64, 'base64'), signature });
    return { id: echoedId, ok: true, code: null, profile: result.profile, job_id: jobIdOf(result.payload) };
  } catch (err) {
    return { id: echoedId, ok: false, code: describeError(err).code, profile: null, job_id: null };
  }
}

function lineInvalid(id: string | number | null): BatchResult {
  return { id, ok: false, code: 'ERR_BATCH_LINE_INVALID', profile: null, job_id: null };
}
