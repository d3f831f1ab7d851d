/**
 * `jobhook send --break CAUSE` (the BUILT binary, spawned) against a real receiver (core's
 * createReceiver behind node:http, the demo key pair, captureFailures on): every cause is refused
 * with a 4xx, the receiver's log line carries its cheap cause, and `jobhook doctor` on the captured
 * request names the exact cause.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJsonLogger, createReceiver, type Receiver } from '@jobhook/core';
import { BREAK_VARIANTS, type BreakCause } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_PUBLIC_KEY as PUBLIC_KEY,
  runJobhook as jobhook,
  runSend as send,
  serveReceiver,
  type ReceiverServer,
} from './helpers/jobhook-process.js';

/** The cheap cause the receiver logs for each broken kind (the body changes are one: body-mismatch). */
const LOGGED: Record<BreakCause, string> = {
  'signature-missing': 'signature-missing',
  'signature-elsewhere': 'signature-elsewhere',
  'signature-malformed': 'signature-malformed',
  'hash-algorithm': 'hash-algorithm',
  'unknown-key': 'unknown-key',
  'body-malformed': 'body-malformed',
  'body-transcoded': 'body-mismatch',
  'body-reserialized': 'body-mismatch',
  'body-modified': 'body-mismatch',
};

/** A receiver of its own per cause: refusal lines are one per code per minute, and causes share codes. */
function freshReceiver(): Receiver {
  return createReceiver({
    publicKeys: readFileSync(PUBLIC_KEY),
    onEvent: () => {},
    logger: createJsonLogger({ write: (line) => void logs.push(JSON.parse(line)) }),
    captureFailures: { dir: captures() },
  });
}

const captures = (): string => join(tmp, 'captures');
const captureFiles = (): string[] => (existsSync(captures()) ? readdirSync(captures()).filter((f) => f.endsWith('.json')) : []);

let tmp: string;
let server: ReceiverServer;
let receiver: Receiver;
let url: string;
const logs: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-send-break-'));
  receiver = freshReceiver();
  server = await serveReceiver(() => receiver);
  url = server.url;
});

afterAll(async () => {
  await server.close();
  await receiver.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('jobhook send --break', () => {
  it.each(Object.keys(BREAK_VARIANTS) as BreakCause[])('%s: refused, logged with its cause, diagnosed from the capture', async (cause) => {
    await receiver.close();
    receiver = freshReceiver();
    const before = new Set(captureFiles());
    const logsBefore = logs.length;
    const sent = await send(url, '--break', cause);
    expect(sent.code).toBe(1);
    expect(sent.err).toContain(`every delivery broken: ${cause} (${BREAK_VARIANTS[cause][0]})`);
    const [line] = sent.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: number; code: string });
    expect(line!.status).toBeGreaterThanOrEqual(400);
    expect(line!.status).toBeLessThan(500);
    expect(logs.slice(logsBefore).filter((l) => l['kind'] === 'rejected')).toEqual([
      expect.objectContaining({ code: line!.code, cause: LOGGED[cause] }),
    ]);

    await expect.poll(() => captureFiles().length).toBe(before.size + 1);
    const [captured] = captureFiles().filter((f) => !before.has(f));
    const doctor = await jobhook(['doctor', '--public-key', PUBLIC_KEY, '--request', join(captures(), captured!), '--json']);
    expect(doctor.code).toBe(1);
    expect(JSON.parse(doctor.out)).toMatchObject({ verified: false, cause });
  });

  it('--break-variant picks the way; a bad cause or variant is a usage error', async () => {
    const sent = await send(url, '--break', 'signature-malformed', '--break-variant', '6');
    expect(sent.err).toContain('signature-malformed (digest)');
    const badCause = await send(url, '--break', 'typo');
    expect(badCause).toMatchObject({ code: 2, err: expect.stringContaining('--break must be one of') });
    const badVariant = await send(url, '--break', 'unknown-key', '--break-variant', '9');
    expect(badVariant).toMatchObject({ code: 2, err: expect.stringContaining('--break-variant must be a whole number from 0 to 3') });
    const alone = await send(url, '--break-variant', '1');
    expect(alone).toMatchObject({ code: 2, err: expect.stringContaining('--break-variant needs --break') });
  });
});
