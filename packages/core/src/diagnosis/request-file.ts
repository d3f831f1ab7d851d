import { mkdirSync, readdirSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { optionError } from '../internal/option-checks.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { Logger } from '../log/logger.js';
import { listHeaders } from '../http/header-list.js';

// What `captureFailures` and `record` share: the request-file form `jobhook doctor
// --request` reads, the private directory and the atomic write. One copy, so a recording and a
// capture keep exactly the same headers and land on disk the same way.

/**
 * Creates `dir` (`0700` when missing) and lists it, synchronously: at construction, before any request.
 * @throws JobhookError `ERR_OPTION_INVALID` when `dir` cannot be created or read.
 * @internal
 */
export function openPrivateDir(dir: string, option: string): string[] {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return readdirSync(dir);
  } catch (err) {
    throw optionError('createReceiver', `${option}.dir ${dir} cannot be created or read`, { cause: err });
  }
}

/**
 * Writes `text` to `dir/name` as a `0600` file, under a temporary dot-name first and renamed, so a
 * reader never sees half a file and a listing never counts one; the temporary file is removed when
 * a step fails. Rejects with the failure.
 * @internal
 */
export async function writePrivateFile(dir: string, name: string, text: string): Promise<void> {
  const temp = join(dir, `.${name}.tmp`);
  try {
    await writeFile(temp, text, { mode: 0o600, flag: 'wx' });
    await rename(temp, join(dir, name));
  } catch (err) {
    await rm(temp, { force: true }).catch(() => {});
    throw err;
  }
}

/** How often a failing directory may log: a full disk must not cost one line per request. */
export const FILE_ERROR_LOG_MS = 60_000;

/**
 * A reporter of write failures that logs the first, then at most one line a minute.
 * @internal
 */
export function fileErrorReporter(log: Logger, dir: string, message: string): (err: unknown) => void {
  let lastErrorAt = -Infinity;
  return (err) => {
    const now = performance.now();
    if (now - lastErrorAt < FILE_ERROR_LOG_MS) return;
    lastErrorAt = now;
    log.error({ err, dir }, message);
  };
}

/** One request as the receiver had it (the body is absent when refused before it was read). @internal */
export interface FileRequest {
  method: string;
  headers: RequestHeaders;
  body: Uint8Array | string | undefined;
}

/** The request members of a request file: `{method, headers, body_b64}`, and why a body is missing. @internal */
export interface RequestFileFields {
  method: string;
  headers: Record<string, string | string[]>;
  body_b64: string;
  body_read?: false;
  body_omitted?: number;
}

/**
 * The request members of a request file, header values from `keepValue` (the allow-list), the
 * body as base64 unless longer than `maxBodyBytes` (then only its length, `body_omitted`).
 * @param known lower-case names to read from a headers object that can only `get()`.
 * @internal
 */
export function requestFileFields(
  request: FileRequest,
  known: readonly string[],
  keepValue: (name: string, value: string | string[]) => string | string[],
  maxBodyBytes: number,
): RequestFileFields {
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  const headers = Object.fromEntries(listHeaders(request.headers, known).map(([name, value]) => [name, keepValue(name, value)]));
  return {
    method: request.method,
    headers,
    body_b64:
      body === undefined || body.length > maxBodyBytes ? '' : Buffer.from(body.buffer, body.byteOffset, body.length).toString('base64'),
    ...(body === undefined ? { body_read: false as const } : body.length > maxBodyBytes ? { body_omitted: body.length } : {}),
  };
}

/** A file name's time part: ISO 8601 without the characters some file systems refuse. @internal */
export const fileTime = (date: Date): string => date.toISOString().replace(/[:.]/g, '-');
