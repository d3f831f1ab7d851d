import {
  checkInteger,
  checkMs,
  checkObject,
  describeValue,
  MAX_TIMER_MS,
  optionError,
  readOption,
  redactUrl,
} from '../internal/option-checks.js';
import {
  resolveParseOptions,
  resolveProfiles,
  type ParseOptions,
  type ResolvedParseOptions,
} from '../canonical/canonical-option-checks.js';
import type { CanonicalProfile } from '../canonical/profiles.js';
import { createKeyRing, type KeyRing, type PublicKeyInput } from '../keys/key-ring.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { resolveHeaderNames } from '../signature/signature-option-checks.js';

// Every option the diagnosis room takes is checked here: the receiver's `captureFailures` and
// `record` (checked by createReceiver through this file), diagnoseDelivery's options and
// sendRecording's target. The option types live here too, so a check and what it checks are read
// together and the room's other files only import from here (never the other way round).

/**
 * `captureFailures` of `createReceiver`: write requests refused for a signature or body cause to
 * `dir`, in the request-file form `jobhook doctor --request` reads. The files hold customer
 * payloads: keep `dir` private. Header values are kept from an allow-list: the service's own
 * headers (as `headerNames` names them), `Content-Type`, `Content-Length`, `User-Agent`, and a
 * signature a configured key decodes found under another name (so the doctor still finds it);
 * every other header is written by name with the value `[dropped]`.
 *
 * @example
 * ```ts
 * createReceiver({ publicKeys, onEvent, captureFailures: { dir: '/var/lib/app/webhook-failures', max: 100 } });
 * ```
 */
export interface CaptureFailuresOptions {
  /** Directory of the capture files (created `0700` when missing; files are `0600`). */
  dir: string;
  /**
   * At most this many capture files in `dir`, and at most `floor(max / 7)` (at least 1) of any one
   * refusal cause, so the shares never add up to more than `max` (from `max` 7 up) and a flood of
   * the causes anyone can send leaves room for the others; later failures are not written (the
   * oldest are kept). Default 100 (14 per cause).
   */
  max?: number;
  /** Bodies longer than this are left out of a capture (`body_omitted` gives their length). Default 256 KiB. */
  maxBodyBytes?: number;
}

/**
 * `record` of `createReceiver`: keep every delivery whose signature verified, byte for byte, in
 * `dir`, one JSON file each in the request-file form of `captureFailures` (`jobhook doctor
 * --request` reads it, `jobhook replay` sends it again, `loadRecording` of `@jobhook/core/testing`
 * loads it as a test fixture): `method`, `headers` (values only of the allow-listed ones, as
 * `captureFailures` keeps them: the service's headers with the signature, `Content-Type`,
 * `Content-Length`, `User-Agent`; every other header by name, its value `[dropped]`), `body_b64`,
 * `arrived_at`, and the answer: `status`, `kind`, `code`, `job_id`.
 *
 * The files hold customer payloads, and the signed bytes hold the job's live recipient tag (in
 * `user_parameters`; it cannot be removed without breaking the signature): keep `dir` private.
 * Files are written after the answer (never making it wait on the disk); the newest `max` are kept.
 *
 * @example
 * ```ts
 * createReceiver({ publicKeys, onEvent, record: { dir: '/var/lib/app/webhook-recordings', max: 1000 } });
 * ```
 */
export interface RecordOptions {
  /** Directory of the recordings (created `0700` when missing; files are `0600`). */
  dir: string;
  /** At most this many recordings in `dir`: past it the oldest are deleted. Default 1000. */
  max?: number;
  /**
   * Bodies longer than this are recorded without their bytes (`body_omitted` gives their length;
   * such a recording cannot be replayed). Default 1 MiB.
   */
  maxBodyBytes?: number;
}

/** `{ dir, max?, maxBodyBytes? }` checked and filled in. @internal */
export interface ResolvedFileOptions {
  readonly dir: string;
  readonly max: number;
  readonly maxBodyBytes: number;
}

/** {@link CaptureFailuresOptions} checked and filled in. @internal */
export type ResolvedCaptureFailures = ResolvedFileOptions;

/** {@link RecordOptions} checked and filled in. @internal */
export type ResolvedRecord = ResolvedFileOptions;

/** Largest `max` of a file option: a directory listing is read synchronously at construction. */
const MAX_FILES = 100_000;
const DEFAULT_MAX_CAPTURES = 100;
const DEFAULT_MAX_CAPTURE_BODY_BYTES = 256 * 1024;
const DEFAULT_MAX_RECORDINGS = 1000;
const DEFAULT_MAX_RECORDING_BODY_BYTES = 1024 * 1024;

/**
 * Checks a `{ dir, max?, maxBodyBytes? }` option (`captureFailures`, `record`); undefined when not
 * given. One check for both, so a capture and a recording refuse a mistake in the same words.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the field (`record.max`).
 */
function resolveFileOptions(
  value: unknown,
  owner: string,
  option: string,
  defaults: { max: number; maxBodyBytes: number },
): ResolvedFileOptions | undefined {
  if (value === undefined) return undefined;
  checkObject(owner, option, value, 'an object { dir, max?, maxBodyBytes? }');
  const { dir, max = defaults.max, maxBodyBytes = defaults.maxBodyBytes } = value as Partial<Record<keyof ResolvedFileOptions, unknown>>;
  if (typeof dir !== 'string' || dir.trim() === '') {
    throw optionError(owner, `${option}.dir must be a directory path, got ${describeValue(dir)}`);
  }
  return {
    dir,
    max: checkInteger(owner, `${option}.max`, max, { min: 1, max: MAX_FILES }),
    maxBodyBytes: checkInteger(owner, `${option}.maxBodyBytes`, maxBodyBytes, { min: 0 }),
  };
}

/**
 * Checks `captureFailures`; undefined when not given.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the field.
 * @internal
 */
export function resolveCaptureFailures(value: unknown, owner: string): ResolvedCaptureFailures | undefined {
  return resolveFileOptions(value, owner, 'captureFailures', { max: DEFAULT_MAX_CAPTURES, maxBodyBytes: DEFAULT_MAX_CAPTURE_BODY_BYTES });
}

/**
 * Checks `record`; undefined when not given.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the field.
 * @internal
 */
export function resolveRecord(value: unknown, owner: string): ResolvedRecord | undefined {
  return resolveFileOptions(value, owner, 'record', { max: DEFAULT_MAX_RECORDINGS, maxBodyBytes: DEFAULT_MAX_RECORDING_BODY_BYTES });
}

/** Options of `diagnoseDelivery`. */
export interface DiagnoseOptions extends ParseOptions {
  /** The public key(s) you verify with: PEM, KeyObject, a list, or a key ring (parse once when diagnosing many). */
  publicKeys: PublicKeyInput | readonly PublicKeyInput[] | KeyRing;
  /** Header names, as the receiver's `headerNames`. Default the spec's `X-Service-*`. */
  headerNames?: Partial<WebhookHeaderNames>;
  /** Canonical profiles tried, as the receiver's `profiles`. Default all four. */
  profiles?: readonly CanonicalProfile[];
}

/** {@link DiagnoseOptions} checked and filled in. @internal */
export interface ResolvedDiagnoseOptions {
  readonly keyRing: KeyRing;
  readonly names: WebhookHeaderNames;
  readonly profiles: readonly CanonicalProfile[];
  readonly limits: ResolvedParseOptions;
}

/** Offline, the body limit is the doctor's, not a receiver's: large enough for any real delivery. */
const DIAGNOSIS_MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Checks `diagnoseDelivery`'s options and reads its keys.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option; `ERR_KEY_INVALID` for a key that does not parse.
 * @internal
 */
export function resolveDiagnoseOptions(options: DiagnoseOptions): ResolvedDiagnoseOptions {
  const where = 'diagnoseDelivery';
  if (readOption(where, options, 'publicKeys') === undefined) {
    throw optionError(where, 'options.publicKeys is required (the service public key PEM)');
  }
  return {
    keyRing: createKeyRing(options.publicKeys),
    names: resolveHeaderNames(options.headerNames, where),
    profiles: resolveProfiles(options.profiles, where),
    limits: resolveParseOptions({ ...options, maxBodyBytes: options.maxBodyBytes ?? DIAGNOSIS_MAX_BODY_BYTES }, where),
  };
}

/** Default of `sendRecording`'s `timeoutMs`. */
const DEFAULT_REPLAY_TIMEOUT_MS = 30_000;

/** `sendRecording`'s target and options checked and filled in. @internal */
export interface ResolvedSendOptions {
  readonly target: URL;
  readonly timeoutMs: number;
}

/**
 * Checks `sendRecording`'s `url` (an `http:` or `https:` URL) and `timeoutMs` (a timer, so at most
 * 2^31-1 ms). The message shows the URL with its password redacted.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveSendOptions(url: unknown, options: unknown): ResolvedSendOptions {
  const where = 'sendRecording';
  let target: URL | undefined;
  try {
    target = typeof url === 'string' || url instanceof URL ? new URL(url) : undefined;
  } catch {
    target = undefined;
  }
  if (target?.protocol !== 'http:' && target?.protocol !== 'https:') {
    const shown = target === undefined ? describeValue(url) : JSON.stringify(redactUrl(target.href));
    throw optionError(where, `url must be an http: or https: URL, got ${shown}`);
  }
  checkObject(where, 'options', options);
  // null is "not given", as it was before the check existed.
  const timeoutMs = (options as { timeoutMs?: unknown }).timeoutMs ?? DEFAULT_REPLAY_TIMEOUT_MS;
  return { target, timeoutMs: checkMs(where, 'timeoutMs', timeoutMs, { max: MAX_TIMER_MS }) };
}
