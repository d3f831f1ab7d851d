import { readFileSync } from 'node:fs';
import { parseRecording, sendRecording, type Recording, type ReplayAnswer } from '../diagnosis/recording-file.js';
import type { Receiver, ReceiverResponse } from '../receiver/receiver-types.js';

/**
 * A delivery `record` kept, as a test fixture: the request, byte for byte, and when it arrived.
 *
 * @example
 * ```ts
 * const recording = loadRecording('test/fixtures/delivery-2026-11-28T12-00-00-000Z-1a2b3c4d.json');
 * const answer = await deliverRecording(receiver, recording);
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when the file is not a recording (a capture of a refused
 *   request, a body left out, not JSON); the file system's error when it cannot be read.
 */
export function loadRecording(path: string): Recording {
  return parseRecording(readFileSync(path, 'utf8'), `loadRecording(${path})`);
}

/**
 * Delivers a recording as it came, with the clock pinned to its arrival: to a receiver in this
 * process (`receiver.handle`), or to an app's URL over HTTP.
 *
 * - A receiver: `Date.now()` reads `recording.arrivedAt` while the receiver checks the delivery
 *   (the replay window, the recipient tag's age: everything it does before its first await, which
 *   with the memory store includes a handler that returns no promise), then the real clock again.
 *   No test runner is needed; a handler that awaits sees the real clock after its first await. A
 *   store that answers asynchronously (Redis, PostgreSQL) with `recipientSecret` binds the tag's
 *   nonce before the replay window is checked, so that check reads the real clock: pin it with your
 *   runner's fake time there, as for a URL.
 * - A URL: the request is sent as it came (`sendRecording`); an app in this process judges it on
 *   its own clock, so pin that first with your runner's fake time, e.g.
 *   `vi.useFakeTimers({ toFake: ['Date'] }); vi.setSystemTime(recording.arrivedAt)`.
 *
 * @returns the receiver's answer (`status`, `body`, `outcome`), or for a URL the app's (`status`,
 *   `code`, `jobId`, `duplicate`, `body`).
 */
export function deliverRecording(target: Receiver, recording: Recording): Promise<ReceiverResponse>;
export function deliverRecording(target: string | URL, recording: Recording): Promise<ReplayAnswer>;
export function deliverRecording(target: Receiver | string | URL, recording: Recording): Promise<ReceiverResponse | ReplayAnswer> {
  if (typeof target === 'string' || target instanceof URL) return sendRecording(target, recording);
  const realNow = Date.now;
  const pinned = recording.arrivedAt.getTime();
  Date.now = () => pinned;
  try {
    return target.handle({ method: recording.method, headers: recording.headers, rawBody: recording.body });
  } finally {
    Date.now = realNow;
  }
}
