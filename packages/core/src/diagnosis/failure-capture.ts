import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JobhookError } from '../errors.js';
import type { Logger } from '../receiver/logger.js';
import type { RequestHeaders } from '../receiver/request-headers.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { listHeaders } from './header-list.js';
import type { RefusalCauseFields } from './refusal-cause.js';

/**
 * `captureFailures` of `createReceiver`: write requests refused for a signature or body cause to
 * `dir`, in the request-file form `jobhook doctor --request` reads. The files hold customer
 * payloads: keep `dir` private.
 */
export interface CaptureFailuresOptions {
  /** Directory of the capture files (created `0700` when missing; files are `0600`). */
  dir: string;
  /** At most this many capture files in `dir`; later failures are not written (the oldest are kept). Default 100. */
  max?: number;
  /** Bodies longer than this are left out of a capture (`body_omitted` gives their length). Default 256 KiB. */
  maxBodyBytes?: number;
}

/** {@link CaptureFailuresOptions} checked and filled in. @internal */
export interface ResolvedCaptureFailures {
  readonly dir: string;
  readonly max: number;
  readonly maxBodyBytes: number;
}

const DEFAULT_MAX_CAPTURES = 100;
const DEFAULT_MAX_CAPTURE_BODY_BYTES = 256 * 1024;
const MAX_CAPTURES = 100_000;
/** How often a full directory is counted again (someone may have deleted files). */
const RESCAN_MS = 60_000;
/** Capture files, as `readdir` counts them (temporary files start with a dot). */
const CAPTURE_FILE = /^failure-.+\.json$/;

/**
 * Checks `captureFailures`; undefined when not given.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the field.
 * @internal
 */
export function resolveCaptureFailures(value: unknown, owner: string): ResolvedCaptureFailures | undefined {
  if (value === undefined) return undefined;
  const fail = (message: string): never => {
    throw new JobhookError('ERR_OPTION_INVALID', `${owner}: captureFailures${message}`);
  };
  if (typeof value !== 'object' || value === null) fail(' must be an object { dir, max? }');
  const { dir, max = DEFAULT_MAX_CAPTURES, maxBodyBytes = DEFAULT_MAX_CAPTURE_BODY_BYTES } = value as Partial<CaptureFailuresOptions>;
  if (typeof dir !== 'string' || dir.trim() === '') fail('.dir must be a directory path');
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_CAPTURES)
    fail(`.max must be an integer from 1 to ${MAX_CAPTURES}, got ${String(max)}`);
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) fail(`.maxBodyBytes must be an integer >= 0, got ${String(maxBodyBytes)}`);
  return { dir: dir as string, max, maxBodyBytes };
}

/** One refused request, as the receiver had it (the body is absent when refused before it was read). @internal */
export interface FailedRequest {
  method: string;
  headers: RequestHeaders;
  body: Uint8Array | string | undefined;
}

/** Header names whose values are credentials, whatever the service: never written to a capture. */
const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'apikey',
]);
const SECRET_NAME = /auth|token|secret|passw|cookie|session|api[-_]?key|credential|private/i;
const REDACTED = '[redacted]';
/** Longest header value kept: twice a signature of the largest key; Node's 16 KiB head bounds the rest, a fetch runtime may not. */
const MAX_HEADER_VALUE_CHARS = 8192;
const capValue = (value: string): string =>
  value.length > MAX_HEADER_VALUE_CHARS ? `${value.slice(0, MAX_HEADER_VALUE_CHARS)}[…]` : value;

/**
 * Makes the capture writer of one receiver: fire and forget (the answer never waits for the disk),
 * bounded in count (`max` files in `dir`, counted at the first capture and again at most once a
 * minute while full) and size (`maxBodyBytes` of body per file), secret headers redacted, each file
 * written to a temporary name and renamed.
 * @internal
 */
export function createFailureCapture(
  options: ResolvedCaptureFailures,
  names: WebhookHeaderNames,
  log: Logger,
): (request: FailedRequest, refusal: { status: number; code: string; cause: RefusalCauseFields }) => void {
  const { dir, max, maxBodyBytes } = options;
  const own = new Set([names.signature, names.hashAlgorithm, names.webhook].map((n) => n.toLowerCase()));
  const known = ['content-type', 'content-length', 'user-agent', ...own];
  let count = 0;
  let scannedAt = 0;
  let scan: Promise<void> | undefined;
  let fullWarned = false;
  let lastErrorAt = -Infinity;

  const countFiles = (): Promise<void> => {
    scan ??= mkdir(dir, { recursive: true, mode: 0o700 })
      .then(() => readdir(dir))
      .then((files) => {
        count = files.filter((f) => CAPTURE_FILE.test(f)).length;
      })
      .finally(() => {
        scannedAt = Date.now();
        scan = undefined;
      });
    return scan;
  };

  const redact = (name: string, value: string | string[]): string | string[] => {
    if (own.has(name) || !(SECRET_HEADERS.has(name) || SECRET_NAME.test(name))) {
      return Array.isArray(value) ? value.map(capValue) : capValue(value);
    }
    return Array.isArray(value) ? value.map(() => REDACTED) : REDACTED;
  };

  async function write(request: FailedRequest, refusal: { status: number; code: string; cause: RefusalCauseFields }): Promise<void> {
    if (scannedAt === 0 || (count >= max && Date.now() - scannedAt >= RESCAN_MS)) await countFiles();
    if (count >= max) {
      if (!fullWarned) {
        fullWarned = true;
        log.warn(
          { dir, max },
          `jobhook: captureFailures: ${dir} holds ${max} captures; later failures are not written until some are deleted`,
        );
      }
      return;
    }
    fullWarned = false;
    count++; // reserved before the first await, so concurrent captures never pass max
    const capturedAt = new Date();
    const body =
      request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
    const headers = Object.fromEntries(listHeaders(request.headers, known).map(([name, value]) => [name, redact(name, value)]));
    const record = {
      method: request.method,
      headers,
      body_b64: body === undefined || body.length > maxBodyBytes ? '' : Buffer.from(body).toString('base64'),
      ...(body === undefined ? { body_read: false } : body.length > maxBodyBytes ? { body_omitted: body.length } : {}),
      captured_at: capturedAt.toISOString(),
      status: refusal.status,
      code: refusal.code,
      cause: refusal.cause.cause,
    };
    const name = `failure-${capturedAt.toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.json`;
    const temp = join(dir, `.${name}.tmp`);
    try {
      await writeFile(temp, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: 'wx' });
      await rename(temp, join(dir, name));
    } catch (err) {
      count--;
      await rm(temp, { force: true }).catch(() => {});
      throw err;
    }
  }

  return (request, refusal) => {
    write(request, refusal).catch((err: unknown) => {
      // A full disk or a missing permission must not cost one log line per refused request.
      const now = Date.now();
      if (now - lastErrorAt < RESCAN_MS) return;
      lastErrorAt = now;
      log.error({ err, dir }, 'jobhook: captureFailures could not write a capture file (one line per minute)');
    });
  };
}
