import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyRing } from '../keys/key-ring.js';
import type { Logger } from '../log/logger.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { keptHeaderValues, keptNames } from './failure-capture.js';
import { fileErrorReporter, fileTime, openPrivateDir, requestFileFields, writePrivateFile, type FileRequest } from './request-file.js';
import type { ResolvedRecord } from './diagnosis-option-checks.js';

/**
 * Recordings being written at once, at most: a disk slower than the deliveries drops recordings
 * (counted, logged) rather than holding their bodies in memory without bound.
 */
const MAX_PENDING_WRITES = 64;
/** Recording files, as a listing shows them (temporary files start with a dot). */
const RECORDING_FILE = /^delivery-.+\.json$/;

/** The answer a recording keeps. @internal */
export interface RecordedOutcome {
  status: number;
  kind: string;
  code?: string | undefined;
  jobId?: string | undefined;
}

/** Records one verified delivery; the file is written later, never in the caller's turn. @internal */
export type RecordDelivery = (request: FileRequest, arrivedAt: number, outcome: RecordedOutcome) => void;

/**
 * Makes the recorder of one receiver. The call only queues: the file is built and written on a
 * `setImmediate`, after the adapter has written the answer, and write failures are logged (the
 * first, then one line a minute), never thrown. Files are named by arrival (`delivery-<time>-<sequence>-<id>.json`,
 * so a listing sorts oldest first); past `max` the oldest are deleted, the ones of earlier runs first.
 * @throws JobhookError `ERR_OPTION_INVALID` when `dir` cannot be created or read.
 * @internal
 */
export function createDeliveryRecorder(options: ResolvedRecord, names: WebhookHeaderNames, keyRing: KeyRing, log: Logger): RecordDelivery {
  const { dir, max, maxBodyBytes } = options;
  const known = keptNames(names);
  const keepValues = keptHeaderValues(names, keyRing);
  /** The recordings in arrival order: the earlier runs' files (sorted by name), then this run's. */
  const order = openPrivateDir(dir, 'record')
    .filter((file) => RECORDING_FILE.test(file))
    .sort();
  /** Names still being written; one evicted meanwhile is deleted once its write ends. */
  const pending = new Set<string>();
  const evictedWhilePending = new Set<string>();
  /** Recordings handed over and not yet started (their write comes on a setImmediate). */
  let queued = 0;
  let dropped = 0;
  /** This run's count, after the time in a name: two recordings of one millisecond keep their order. */
  let sequence = 0;
  const reportError = fileErrorReporter(log, dir, 'jobhook: record could not write or delete a recording (one line per minute)');
  const reportDropped = fileErrorReporter(log, dir, 'jobhook: record dropped recordings: the disk is slower than the deliveries');

  const remove = (name: string): void => {
    rm(join(dir, name), { force: true }).catch(reportError);
  };
  const evict = (): void => {
    while (order.length > max) {
      const oldest = order.shift()!;
      if (pending.has(oldest)) evictedWhilePending.add(oldest);
      else remove(oldest);
    }
  };

  const write = (request: FileRequest, arrivedAt: number, outcome: RecordedOutcome): void => {
    const arrived = new Date(arrivedAt);
    const name = `delivery-${fileTime(arrived)}-${String(sequence++ % 1_000_000).padStart(6, '0')}-${randomUUID().slice(0, 8)}.json`;
    const record = {
      ...requestFileFields(request, known, keepValues, maxBodyBytes),
      arrived_at: arrived.toISOString(),
      status: outcome.status,
      kind: outcome.kind,
      ...(outcome.code === undefined ? {} : { code: outcome.code }),
      ...(outcome.jobId === undefined ? {} : { job_id: outcome.jobId }),
    };
    pending.add(name);
    order.push(name);
    evict();
    writePrivateFile(dir, name, `${JSON.stringify(record)}\n`).then(
      () => {
        pending.delete(name);
        if (evictedWhilePending.delete(name)) remove(name);
      },
      (err: unknown) => {
        pending.delete(name);
        evictedWhilePending.delete(name);
        const at = order.indexOf(name);
        if (at >= 0) order.splice(at, 1);
        reportError(err);
      },
    );
  };

  return (request, arrivedAt, outcome) => {
    if (pending.size + queued >= MAX_PENDING_WRITES) {
      dropped++;
      reportDropped(new Error(`${dropped} recordings dropped so far: ${MAX_PENDING_WRITES} were being written`));
      return;
    }
    // Counted now, so a burst in one turn cannot pass the bound before the first write starts.
    queued++;
    setImmediate(() => {
      queued--;
      try {
        write(request, arrivedAt, outcome);
      } catch (err) {
        reportError(err);
      }
    });
  };
}
