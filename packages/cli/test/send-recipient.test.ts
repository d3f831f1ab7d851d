/**
 * `jobhook send --recipient-secret` (the BUILT binary, spawned) against a real receiver with
 * `recipientSecret`: tagged events are handled, the others get the receiver's one refusal answer
 * (its outcome keeps the cause).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReceiver, silentLogger, type AsyncJobCompletedEvent, type Receiver } from '@jobhook/core';
import { buildTestEvent } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, DEMO_PUBLIC_KEY, runSend as send, serveReceiver, type ReceiverServer } from './helpers/jobhook-process.js';

const SECRET = 'send-test-recipient-secret-0123456789';
const handled: AsyncJobCompletedEvent[] = [];
/** The receiver's outcome code of each refused job. */
const refusedAs = new Map<string, string | undefined>();
let server: ReceiverServer;
let receiver: Receiver;
let tmp: string;

const lines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{"job_id"'))
    .map((l) => JSON.parse(l) as { job_id: string; status: number; code: string | null });

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b)`);
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-send-recipient-'));
  let url = '';
  server = await serveReceiver(() => receiver);
  url = server.url;
  receiver = createReceiver({
    publicKeys: readFileSync(DEMO_PUBLIC_KEY),
    logger: silentLogger,
    recipientSecret: SECRET,
    recipientUrl: url,
    onEvent: (event) => void handled.push(event),
    onOutcome: (outcome) => {
      if (outcome.kind === 'rejected' && outcome.jobId !== undefined) refusedAs.set(outcome.jobId, outcome.code);
    },
  });
});

afterAll(async () => {
  await server.close();
  await receiver.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('jobhook send --recipient-secret', () => {
  it('tags each event so the receiver handles it, the tag hidden from the handler', async () => {
    const res = await send(server.url, '--count', '3', '--recipient-secret', SECRET);
    expect(res.code).toBe(0);
    const sent = lines(res.out);
    expect(sent.map((l) => l.status)).toEqual([200, 200, 200]);
    const ours = handled.filter((e) => sent.some((l) => l.job_id === e.job_id));
    expect(ours).toHaveLength(3);
    for (const event of ours) expect('user_parameters' in event).toBe(false);
  });

  it('tags a --payload event, keeping its own user_parameters and job_id', async () => {
    const event = buildTestEvent({ user_parameters: { order_id: 'A-7', ratio: 1.5 } });
    const file = join(tmp, 'event.json');
    writeFileSync(file, JSON.stringify(event));
    const res = await send(server.url, '--payload', file, '--recipient-secret', SECRET);
    expect(lines(res.out)).toEqual([expect.objectContaining({ job_id: event.job_id, status: 200 })]);
    expect(handled.find((e) => e.job_id === event.job_id)?.user_parameters).toEqual({ order_id: 'A-7', ratio: 1.5 });
  });

  it('without the secret, with another secret, or for another URL: 403 ERR_RECIPIENT_REFUSED, exit 1; the cause in the receiver’s outcome', async () => {
    const none = await send(server.url);
    const [first] = lines(none.out);
    expect([none.code, first?.status, first?.code]).toEqual([1, 403, 'ERR_RECIPIENT_REFUSED']);
    expect(refusedAs.get(first!.job_id)).toBe('ERR_RECIPIENT_TAG_MISSING');
    const other = lines((await send(server.url, '--recipient-secret', 'another-secret-0123456789abcdef')).out)[0];
    expect([other?.code, refusedAs.get(other!.job_id)]).toEqual(['ERR_RECIPIENT_REFUSED', 'ERR_RECIPIENT_TAG_INVALID']);
    const elsewhere = lines(
      (await send(server.url, '--recipient-secret', SECRET, '--recipient-url', 'https://staging.example.com/hooks')).out,
    )[0];
    expect([elsewhere?.code, refusedAs.get(elsewhere!.job_id)]).toEqual(['ERR_RECIPIENT_REFUSED', 'ERR_RECIPIENT_TAG_INVALID']);
  });

  it('exits 2 on a short secret or --recipient-url without a secret', async () => {
    const short = await send(server.url, '--recipient-secret', 'short');
    expect([short.code, short.err]).toEqual([2, expect.stringContaining('--recipient-secret')]);
    const lone = await send(server.url, '--recipient-url', server.url);
    expect([lone.code, lone.err]).toEqual([2, expect.stringContaining('--recipient-url needs --recipient-secret')]);
  });
});
