import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { REFUSAL_CAUSES, type RefusalCause } from '../causes.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Logger } from '../log/logger.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { recoverDigests } from '../signature/recover-digest.js';
import type { RefusalCauseFields } from './explain-refusal.js';
import { keySizedSignatureIn } from './signature-findings.js';
import { fileErrorReporter, fileTime, openPrivateDir, requestFileFields, writePrivateFile, type FileRequest } from './request-file.js';
import type { ResolvedCaptureFailures } from './diagnosis-option-checks.js';

/** How often a full directory is counted again (someone may have deleted files). */
const RESCAN_MS = 60_000;
/** Capture files, as `readdir` counts them (temporary files start with a dot). */
const CAPTURE_FILE = /^failure-.+\.json$/;

/** One refused request, as the receiver had it (the body is absent when refused before it was read). @internal */
export type FailedRequest = FileRequest;

/**
 * The headers whose values a capture keeps besides the service's own (spec 6.1, as `headerNames`
 * names them): what the diagnosis reads. Every other header keeps its name and loses its value,
 * whatever it is called: proxies in front of a receiver add credentials under names no list can
 * foresee (`X-Goog-Iap-Jwt-Assertion`, `Cf-Access-Jwt-Assertion`, `X-Amzn-Oidc-*`,
 * `X-Ms-Client-Principal`, `X-Forwarded-Client-Cert`, cookies, `Authorization`).
 */
const KEPT_HEADERS: readonly string[] = ['content-type', 'content-length', 'user-agent'];
/** The lower-case names whose values a capture keeps, the configured `headerNames` among them. @internal */
export const keptNames = (names: WebhookHeaderNames): string[] => [
  ...KEPT_HEADERS,
  ...[names.signature, names.hashAlgorithm, names.webhook].map((n) => n.toLowerCase()),
];
/** What a capture writes in place of a value it does not keep. */
const DROPPED = '[dropped]';
/** Longest header value kept: twice a signature of the largest key; Node's 16 KiB head bounds the rest, a fetch runtime may not. */
const MAX_HEADER_VALUE_CHARS = 8192;
const capValue = (value: string): string =>
  value.length > MAX_HEADER_VALUE_CHARS ? `${value.slice(0, MAX_HEADER_VALUE_CHARS)}[…]` : value;

/**
 * What a capture writes of one header: the value, capped, for the service's own headers (spec 6.1,
 * under the configured `headerNames`: the signature header every signature refusal names among
 * them), `Content-Type`, `Content-Length` and `User-Agent`; for any other header, the value only
 * when it holds a signature a configured key decodes (hex or base64 of that key's length, possibly
 * labelled or quoted), so the diagnosis still finds a signature sent under another name; else
 * {@link DROPPED}. The key decides, not only the length: a credential that happens to be base64 of
 * 256 bytes stays off the disk, even when the refusal's log line named its header as
 * `signature-elsewhere`. That costs one RSA public operation per such value, only for refused
 * requests that have room to be captured.
 * @internal
 */
export function keptHeaderValues(
  names: WebhookHeaderNames,
  keyRing: KeyRing,
): (name: string, value: string | string[]) => string | string[] {
  const kept = new Set(keptNames(names));
  const isSignature = (value: string): boolean => {
    const hex = keySizedSignatureIn(value, keyRing);
    return hex !== undefined && recoverDigests(Buffer.from(hex, 'hex'), keyRing).length > 0;
  };
  const one = (value: string): string => (isSignature(value) ? capValue(value) : DROPPED);
  return (name, value) => {
    if (kept.has(name)) return Array.isArray(value) ? value.map(capValue) : capValue(value);
    return Array.isArray(value) ? value.map(one) : one(value);
  };
}

/**
 * The causes a capture file can have, each with a share of `max` (a file named otherwise counts toward
 * `max` only). A `work-budget` refusal is a mismatch found by running out of work: it shares
 * `body-mismatch`'s files (its record says `work-budget`).
 */
const CAPTURE_CAUSES: readonly RefusalCause[] = REFUSAL_CAUSES.filter((cause) => cause !== 'work-budget');
const captureCause = (cause: RefusalCause): RefusalCause => (cause === 'work-budget' ? 'body-mismatch' : cause);
/** `failure-<cause>-<time>-<id>.json`: the cause in the name, so counting the directory counts each share. */
const CAUSE_IN_NAME = new RegExp(`^failure-(${CAPTURE_CAUSES.join('|')})-`);

/**
 * How many capture files each cause may hold: `max` split evenly, rounded down, so the shares of
 * the five causes anyone can send (no valid signature needed) never take the room of the two that
 * need one (`body-malformed`, `body-mismatch`); at least 1. @internal
 */
export function captureShare(max: number): number {
  return Math.max(1, Math.floor(max / CAPTURE_CAUSES.length));
}

/** The capture files in `dir` per cause (`''`: files of no known cause), from a listing. */
function countByCause(files: readonly string[]): Map<string, Set<string>> {
  const byCause = new Map<string, Set<string>>();
  for (const file of files) {
    if (!CAPTURE_FILE.test(file)) continue;
    const cause = CAUSE_IN_NAME.exec(file)?.[1] ?? '';
    let names = byCause.get(cause);
    if (names === undefined) byCause.set(cause, (names = new Set()));
    names.add(file);
  }
  return byCause;
}

function sizeOf(byCause: Map<string, Set<string>>): number {
  let n = 0;
  for (const files of byCause.values()) n += files.size;
  return n;
}

/**
 * Makes the capture writer of one receiver. Every decision is synchronous, so a refused request
 * never waits on the disk and nothing queues:
 * - bounded in count: at most `max` files in `dir`, and at most {@link captureShare} of them per
 *   cause, so a flood of one cause (a scanner sending no signature) cannot starve the others. The
 *   directory is counted once here (synchronously: at construction, before any request), and again
 *   at most once a minute when a capture is refused for room (files may have been deleted); a
 *   capture arriving while that count runs is dropped and counted. Writes still in flight are kept
 *   as reservations across a count, so the cap never overshoots;
 * - bounded in size: `maxBodyBytes` of body per file (a longer body is not held, only its length);
 * - header values kept only from an allow-list ({@link keptHeaderValues}); each file written to a
 *   temporary name and renamed.
 * @throws JobhookError `ERR_OPTION_INVALID` when `dir` cannot be created or read.
 * @internal
 */
export function createFailureCapture(
  options: ResolvedCaptureFailures,
  names: WebhookHeaderNames,
  keyRing: KeyRing,
  log: Logger,
): (request: FailedRequest, refusal: { status: number; code: string; cause: RefusalCauseFields }) => void {
  const { dir, max, maxBodyBytes } = options;
  const share = captureShare(max);
  // A headers object with only get() cannot be listed: read the names whose values are kept.
  const known = keptNames(names);
  const keepValues = keptHeaderValues(names, keyRing);
  /**
   * The reservations: final names of the writes started and not yet settled, which a count of the
   * directory may not see yet. A name is here or in `onDisk`, never both, so the counts below are
   * sums kept up to date (constant work per refused request, whatever `max`).
   */
  const pending = new Map<string, string>();
  const pendingOf = new Map<string, number>();
  let onDisk = countByCause(openPrivateDir(dir, 'captureFailures'));
  let onDiskTotal = sizeOf(onDisk);
  let scannedAt = performance.now();
  let scanning = false;
  /** Writes that finished while a count ran: its listing may predate their rename. */
  let finishedDuringScan: Array<[string, string]> = [];
  let dropped = 0;
  let fullWarned = false;
  const reportError = fileErrorReporter(log, dir, 'jobhook: captureFailures could not write a capture file (one line per minute)');

  const countOf = (cause: string): number => (onDisk.get(cause)?.size ?? 0) + (pendingOf.get(cause) ?? 0);
  const total = (): number => onDiskTotal + pending.size;

  const addOnDisk = (name: string, cause: string): void => {
    let files = onDisk.get(cause);
    if (files === undefined) onDisk.set(cause, (files = new Set()));
    if (!files.has(name)) onDiskTotal++;
    files.add(name);
  };
  const reserve = (name: string, cause: string): void => {
    pending.set(name, cause);
    pendingOf.set(cause, (pendingOf.get(cause) ?? 0) + 1);
  };
  const settle = (name: string, cause: string): void => {
    pending.delete(name);
    pendingOf.set(cause, (pendingOf.get(cause) ?? 1) - 1);
  };

  const rescan = (): void => {
    scanning = true;
    readdir(dir)
      .then((files) => {
        onDisk = countByCause(files);
        // A write renamed before the listing but not yet settled is still a reservation: count it once.
        for (const [name, cause] of pending) onDisk.get(cause)?.delete(name);
        onDiskTotal = sizeOf(onDisk);
        for (const [name, cause] of finishedDuringScan) addOnDisk(name, cause);
      })
      .catch(reportError)
      .finally(() => {
        scannedAt = performance.now();
        scanning = false;
        finishedDuringScan = [];
        // One "no room" warning per count: captures of other causes succeeding meanwhile do not re-arm it.
        fullWarned = false;
        if (dropped > 0) {
          log.warn(
            { dir, dropped },
            `jobhook: captureFailures: ${dropped} refused requests were not captured (no room, or the directory was being counted) since the last count`,
          );
          dropped = 0;
        }
      });
  };

  /** True when a capture of `cause` fits now; otherwise drops it, warns once per full spell, and recounts at most once a minute. */
  const hasRoom = (cause: string): boolean => {
    if (!scanning && countOf(cause) < share && total() < max) return true;
    dropped++;
    if (scanning) return false;
    if (!fullWarned) {
      fullWarned = true;
      log.warn(
        { dir, max, perCause: share, cause },
        `jobhook: captureFailures: ${dir} holds its ${max} captures or the ${share} of cause ${cause}; later failures are not written until some are deleted`,
      );
    }
    if (performance.now() - scannedAt >= RESCAN_MS) rescan();
    return false;
  };

  return (request, refusal) => {
    const cause = captureCause(refusal.cause.cause);
    if (!hasRoom(cause)) return;
    const capturedAt = new Date();
    const record = {
      ...requestFileFields(request, known, keepValues, maxBodyBytes),
      captured_at: capturedAt.toISOString(),
      status: refusal.status,
      code: refusal.code,
      cause: refusal.cause.cause,
    };
    const name = `failure-${cause}-${fileTime(capturedAt)}-${randomUUID().slice(0, 8)}.json`;
    // Reserved before the first await, so concurrent captures never pass the caps.
    reserve(name, cause);
    writePrivateFile(dir, name, `${JSON.stringify(record)}\n`).then(
      () => {
        settle(name, cause);
        addOnDisk(name, cause);
        if (scanning) finishedDuringScan.push([name, cause]);
      },
      (err: unknown) => {
        settle(name, cause);
        reportError(err);
      },
    );
  };
}
