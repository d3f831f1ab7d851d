import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  constructEvent,
  createMemoryStore,
  createReceiver,
  silentLogger,
  validateEvent,
  type IdempotencyStore,
  type JsonObject,
  type ReceiverOptions,
} from '../../src/index.js';
import { parseIsoInstant } from '../../src/events/iso-instant.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
/** `finished_at` as the service writes it (isoformat with +00:00), `ageMs` before the fake now. */
const finishedAgo = (ageMs: number): string => new Date(NOW - ageMs).toISOString().replace('Z', '+00:00');
const errorCode = (body: string): string | undefined => (JSON.parse(body) as { error?: { code: string } }).error?.code;

function receiver(options: Partial<ReceiverOptions> = {}) {
  const handled: string[] = [];
  const r = createReceiver({
    publicKeys: keys.publicKeyPem,
    logger: silentLogger,
    onEvent: (event) => void handled.push(event.job_id),
    ...options,
  });
  return { r, handled };
}
const deliver = (finished_at: string) => buildSignedRequest({ finished_at }, { privateKey: keys.privateKey });

beforeEach(() => {
  // Only Date: the pipeline's own timers and promises run for real.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => void vi.useRealTimers());

describe('replay window: maxEventAgeMs', () => {
  it('refuses, by default, an event finished more than the done TTL (7 days) ago: 400 ERR_EVENT_TOO_OLD, no handler', async () => {
    const { r, handled } = receiver();
    const replay = await r.handle(deliver('2019-01-01T00:00:00+00:00'));
    expect(replay.status).toBe(400);
    expect(errorCode(replay.body)).toBe('ERR_EVENT_TOO_OLD');
    expect(replay.outcome).toMatchObject({ kind: 'rejected', code: 'ERR_EVENT_TOO_OLD', eventStatus: 'success' });
    const eightDays = await r.handle(deliver(finishedAgo(8 * DAY)));
    expect(errorCode(eightDays.body)).toBe('ERR_EVENT_TOO_OLD');
    const sixDays = await r.handle(deliver(finishedAgo(6 * DAY)));
    expect(sixDays.status).toBe(200);
    expect(handled).toHaveLength(1);
    expect(r.stats().rejected).toEqual({ ERR_EVENT_TOO_OLD: 2 });
    await r.close();
  });

  it('allows clockSkewMs (default 5 min) past the window, and not a millisecond more', async () => {
    const { r } = receiver({ maxEventAgeMs: 60_000 });
    expect((await r.handle(deliver(finishedAgo(60_000 + 300_000)))).status).toBe(200);
    expect(errorCode((await r.handle(deliver(finishedAgo(60_000 + 300_001)))).body)).toBe('ERR_EVENT_TOO_OLD');
    const strict = receiver({ maxEventAgeMs: 60_000, clockSkewMs: 0 }).r;
    expect(errorCode((await strict.handle(deliver(finishedAgo(60_001)))).body)).toBe('ERR_EVENT_TOO_OLD');
    // A service clock ahead of ours: the event looks finished in the future, which is no replay.
    expect((await strict.handle(deliver(finishedAgo(-DAY)))).status).toBe(200);
  });

  it('reads a timestamp without an offset as UTC, and honours other offsets', async () => {
    expect(parseIsoInstant('2026-11-23T12:00:00')).toBe(NOW);
    expect(parseIsoInstant('2026-11-23T12:00:00.123456')).toBe(NOW + 123);
    expect(parseIsoInstant('2026-11-23 13:30:00+01:30')).toBe(NOW);
    expect(parseIsoInstant('2026-11-23T07:00:00-05:00')).toBe(NOW);
    expect(parseIsoInstant('2026-11-23T12:00:00Z')).toBe(NOW);
    for (const bad of ['2026-02-30T00:00:00', '2026-11-23T24:00:00', 'yesterday', '1700000000', '']) {
      expect(parseIsoInstant(bad), bad).toBeUndefined();
    }
    const { r } = receiver({ maxEventAgeMs: 60_000, clockSkewMs: 0 });
    // 12:00:30 local-less is 30 s old in UTC whatever TZ the receiver runs in.
    expect((await r.handle(deliver('2026-11-23T11:59:30'))).status).toBe(200);
    expect(errorCode((await r.handle(deliver('2026-11-23T11:58:59'))).body)).toBe('ERR_EVENT_TOO_OLD');
  });

  it('refuses a finished_at that is no timestamp (the window cannot hold): 400 ERR_PAYLOAD_INVALID naming it', async () => {
    const { r, handled } = receiver();
    const res = await r.handle(deliver('last tuesday'));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'ERR_PAYLOAD_INVALID', message: 'payload.finished_at must be an ISO 8601 timestamp' },
    });
    expect(handled).toEqual([]);
  });

  it('a finished_at that is no ISO 8601 instant is invalid whatever the window: validateEvent, constructEvent, the receiver with maxEventAgeMs: false', async () => {
    for (const field of ['finished_at']) {
      const request = buildSignedRequest({ [field]: '2026-02-30T00:00:00+00:00' }, { privateKey: keys.privateKey });
      const { r, handled } = receiver({ maxEventAgeMs: false });
      const res = await r.handle(request);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual({
        error: { code: 'ERR_PAYLOAD_INVALID', message: `payload.${field} must be an ISO 8601 timestamp` },
      });
      expect(handled).toEqual([]);
      expect(() => constructEvent(request.rawBody, request.headers, keys.publicKeyPem)).toThrow(
        expect.objectContaining({ code: 'ERR_PAYLOAD_INVALID', detail: { path: field } }),
      );
      const event = JSON.parse(String(request.rawBody)) as JsonObject;
      expect(() => validateEvent({ ...event, [field]: 1_700_000_000 })).toThrow(
        expect.objectContaining({
          code: 'ERR_PAYLOAD_INVALID',
          message: `payload.${field} must be an ISO 8601 timestamp string, got a number`,
        }),
      );
      expect(validateEvent({ ...event, [field]: '2026-11-23 12:00:00.123456' })).toMatchObject({ [field]: '2026-11-23 12:00:00.123456' });
    }
  });

  it('created_at only has to be a string: nothing reads it, and a refused signed event would be lost', async () => {
    const { r, handled } = receiver();
    expect((await r.handle(buildSignedRequest({ created_at: 'last tuesday' }, { privateKey: keys.privateKey }))).status).toBe(200);
    expect(handled).toHaveLength(1);
    const event = JSON.parse(String(deliver(finishedAgo(0)).rawBody)) as JsonObject;
    expect(() => validateEvent({ ...event, created_at: 1 })).toThrow(
      expect.objectContaining({ code: 'ERR_PAYLOAD_INVALID', detail: { path: 'created_at' } }),
    );
  });

  it('maxEventAgeMs: false turns the check off', async () => {
    const { r, handled } = receiver({ maxEventAgeMs: false });
    expect((await r.handle(deliver('2019-01-01T00:00:00+00:00'))).status).toBe(200);
    expect(handled).toHaveLength(1);
  });

  it('keeps done marks at least maxEventAgeMs + clockSkewMs, so a delivery the window lets in meets its mark', async () => {
    const inner = createMemoryStore();
    const ttls: number[] = [];
    const store: IdempotencyStore = {
      claim: (id, o) => inner.claim(id, o),
      complete: (id, token, o) => {
        ttls.push(o.ttlMs);
        return inner.complete(id, token, o);
      },
      release: (id, token) => inner.release(id, token),
      extend: (id, token, o) => inner.extend(id, token, o),
      close: () => inner.close(),
    };
    const { r } = receiver({ store, doneTtlMs: DAY, maxEventAgeMs: 2 * DAY });
    await r.handle(deliver(finishedAgo(0)));
    expect(ttls).toEqual([2 * DAY + 300_000]);
  });

  it('refuses out-of-range window options, naming them', () => {
    const base = { publicKeys: keys.publicKeyPem, onEvent: () => {} };
    expect(() => createReceiver({ ...base, maxEventAgeMs: 0 })).toThrow(/maxEventAgeMs must be an integer from 1/);
    expect(() => createReceiver({ ...base, maxEventAgeMs: 1.5 })).toThrow(/maxEventAgeMs/);
    expect(() => createReceiver({ ...base, clockSkewMs: -1 })).toThrow(/clockSkewMs must be an integer from 0 to 3600000/);
    expect(() => createReceiver({ ...base, clockSkewMs: 3_600_001 })).toThrow(/clockSkewMs/);
  });
});

describe('job_id compared case-insensitively', () => {
  it('handles the same UUID once whatever its case; the handler and the answer see the lower-case key', async () => {
    const jobs: string[] = [];
    const { r } = receiver({ onEvent: (_event, ctx) => void jobs.push(ctx.jobId) });
    const upper = buildSignedRequest({ job_id: '6F1C2B1E-3D4A-4F5B-9C6D-7E8F9A0B1C2D' }, { privateKey: keys.privateKey });
    const lower = buildSignedRequest({ job_id: '6f1c2b1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d' }, { privateKey: keys.privateKey });
    const first = await r.handle(upper);
    const second = await r.handle(lower);
    expect(JSON.parse(first.body)).toEqual({ ok: true, job_id: '6f1c2b1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d', duplicate: false });
    expect(JSON.parse(second.body)).toEqual({ ok: true, job_id: '6f1c2b1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d', duplicate: true });
    expect(jobs).toEqual(['6f1c2b1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d']);
    // The event itself is as signed.
    expect(first.event?.job_id).toBe('6F1C2B1E-3D4A-4F5B-9C6D-7E8F9A0B1C2D');
  });
});
