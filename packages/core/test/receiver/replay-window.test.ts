import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  constructEvent,
  createMemoryStore,
  createReceiver,
  silentLogger,
  validateEvent,
  type IdempotencyStore,
  type JsonObject,
  type LateEventContext,
  type ReceiverOptions,
} from '../../src/index.js';
import { DEFAULT_CLOCK_SKEW_MS, DEFAULT_MAX_EVENT_AGE_MS } from '../../src/receiver/event-age.js';
import { DEFAULT_DONE_TTL_MS } from '../../src/receiver/receiver-defaults.js';
import { parseIsoInstant } from '../../src/events/iso-instant.js';
import { buildSignedRequest, createFakeClock, createTestKeyPair } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
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
  it('a captured 3-day-old delivery replayed after the memory store restarts is refused, 400 ERR_EVENT_TOO_OLD, not handled twice', async () => {
    /** The attack: a genuine delivery handled when it came, its copy replayed 3 days later, before and after a restart. */
    async function replayAfterRestart(options: Partial<ReceiverOptions>) {
      vi.setSystemTime(NOW);
      const clock = createFakeClock();
      const ran: string[] = [];
      const start = () =>
        createReceiver({
          publicKeys: keys.publicKeyPem,
          logger: silentLogger,
          store: createMemoryStore({ clock }),
          onEvent: (event) => void ran.push(event.job_id),
          ...options,
        });
      const captured = deliver(finishedAgo(0));
      const first = start();
      expect((await first.handle(captured)).status).toBe(200);
      vi.setSystemTime(NOW + 3 * DAY);
      clock.advance(3 * DAY);
      const beforeRestart = await first.handle(captured);
      await first.close();
      const restarted = start();
      const afterRestart = await restarted.handle(captured);
      await restarted.close();
      return { beforeRestart: JSON.parse(beforeRestart.body) as unknown, afterRestart: JSON.parse(afterRestart.body) as unknown, ran };
    }
    // The window as wide as the done TTL (the former default): the copy is a duplicate, then handled again.
    const wide = await replayAfterRestart({ maxEventAgeMs: DEFAULT_DONE_TTL_MS });
    expect(wide.beforeRestart).toMatchObject({ ok: true, duplicate: true });
    expect(wide.afterRestart).toMatchObject({ ok: true, duplicate: false });
    expect(wide.ran).toHaveLength(2);
    // The default window: refused before and after the restart, handled once.
    const tooOld = { error: { code: 'ERR_EVENT_TOO_OLD', message: expect.any(String) } };
    const byDefault = await replayAfterRestart({});
    expect(byDefault.beforeRestart).toEqual(tooOld);
    expect(byDefault.afterRestart).toEqual(tooOld);
    expect(byDefault.ran).toHaveLength(1);
  });

  it('defaults to 6 hours plus 5 min of skew, whatever doneTtlMs, and keeps done marks 7 days', async () => {
    expect(DEFAULT_MAX_EVENT_AGE_MS).toBe(6 * HOUR);
    expect(DEFAULT_CLOCK_SKEW_MS).toBe(5 * 60_000);
    expect(DEFAULT_DONE_TTL_MS).toBe(7 * DAY);
    // The service's retries of one delivery: 4 attempts of 30 s, 3 backoffs of at most 30 s.
    const retrySpanMs = 4 * 30_000 + 3 * 30_000;
    expect(DEFAULT_MAX_EVENT_AGE_MS).toBeGreaterThanOrEqual(50 * retrySpanMs);
    for (const options of [{}, { doneTtlMs: 30 * DAY }]) {
      const { r, handled } = receiver(options);
      expect((await r.handle(deliver(finishedAgo(6 * HOUR + 5 * 60_000)))).status).toBe(200);
      const late = await r.handle(deliver(finishedAgo(6 * HOUR + 5 * 60_000 + 1)));
      expect(late.status).toBe(400);
      expect(JSON.parse(late.body)).toEqual({
        error: { code: 'ERR_EVENT_TOO_OLD', message: 'the event finished 21900 s ago; events older than 21600 s are refused as replays' },
      });
      expect(errorCode((await r.handle(deliver('2019-01-01T00:00:00+00:00'))).body)).toBe('ERR_EVENT_TOO_OLD');
      expect(handled).toHaveLength(1);
      expect(r.stats().rejected).toEqual({ ERR_EVENT_TOO_OLD: 2 });
      await r.close();
    }
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
    // By default the done mark (7 days) outlives the window (6 h + 5 min) by far.
    await receiver({ store }).r.handle(deliver(finishedAgo(0)));
    expect(ttls).toEqual([2 * DAY + 300_000, 7 * DAY]);
  });

  it('refuses out-of-range window options, naming them', () => {
    const base = { publicKeys: keys.publicKeyPem, onEvent: () => {} };
    expect(() => createReceiver({ ...base, maxEventAgeMs: 0 })).toThrow(/maxEventAgeMs must be a positive integer, got 0/);
    expect(() => createReceiver({ ...base, maxEventAgeMs: 1.5 })).toThrow(/maxEventAgeMs/);
    expect(() => createReceiver({ ...base, clockSkewMs: -1 })).toThrow(/clockSkewMs must be an integer from 0 to 3600000/);
    expect(() => createReceiver({ ...base, clockSkewMs: 3_600_001 })).toThrow(/clockSkewMs/);
    // null is "not given" here, as options built from a config file write it: the default window.
    expect(() => createReceiver({ ...base, maxEventAgeMs: null as unknown as number })).not.toThrow();
    const notAFunction = { acceptLateEvent: true } as unknown as Partial<ReceiverOptions>;
    expect(() => createReceiver({ ...base, ...notAFunction })).toThrow(
      expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringMatching(/acceptLateEvent must be a function/) }),
    );
  });
});

describe('acceptLateEvent: the rule that admits events past the window', () => {
  it('is asked only about verified events past the window, with their age; true admits, anything else refuses', async () => {
    const asked: LateEventContext[] = [];
    const verdicts: unknown[] = [true, Promise.resolve(true), false, Promise.resolve(false), 1, 'yes', undefined];
    const { r, handled } = receiver({
      maxEventAgeMs: HOUR,
      acceptLateEvent: (_event, ctx) => {
        asked.push(ctx);
        return verdicts[asked.length - 1] as boolean;
      },
    });
    // In the window: the rule is not asked.
    expect((await r.handle(deliver(finishedAgo(HOUR)))).status).toBe(200);
    expect(asked).toEqual([]);
    const answers: Array<[number, string | undefined]> = [];
    for (let i = 0; i < verdicts.length; i++) {
      const res = await r.handle(deliver(finishedAgo(3 * DAY)));
      answers.push([res.status, errorCode(res.body)]);
    }
    const refused = [400, 'ERR_EVENT_TOO_OLD'];
    expect(answers).toEqual([[200, undefined], [200, undefined], refused, refused, refused, refused, refused]);
    expect(handled).toHaveLength(3);
    expect(asked[0]).toMatchObject({ ageMs: 3 * DAY, maxEventAgeMs: HOUR, profile: 'python', log: silentLogger });
    expect(asked[0]?.jobId).toMatch(/^[0-9a-f-]{36}$/);
    expect(asked[0]?.headers).toMatchObject({ 'user-agent': 'jobhook-test' });
    // Unsigned bytes never reach the rule: a body edited after signing is refused before it.
    const edited = deliver(finishedAgo(3 * DAY));
    const res = await r.handle({ ...edited, rawBody: String(edited.rawBody).replace('success', 'fail') });
    expect(res.status).toBe(401);
    expect(asked).toHaveLength(verdicts.length);
  });

  it('a ledger of the jobs submitted and not yet handled admits a late first delivery once, and refuses its replay after a restart', async () => {
    const awaiting = new Set<string>();
    const ran: string[] = [];
    const start = () =>
      receiver({
        acceptLateEvent: (_event, { jobId }) => awaiting.has(jobId),
        onEvent: (_event, { jobId }) => {
          ran.push(jobId);
          awaiting.delete(jobId);
        },
      }).r;
    const late = deliver(finishedAgo(2 * DAY));
    const jobId = late.event.job_id.toLowerCase();
    awaiting.add(jobId);
    const first = start();
    expect((await first.handle(late)).status).toBe(200);
    // Handled, so out of the ledger: its retry is refused before the claim (400; not retried either way).
    expect(errorCode((await first.handle(late)).body)).toBe('ERR_EVENT_TOO_OLD');
    await first.close();
    const restarted = start();
    expect(errorCode((await restarted.handle(late)).body)).toBe('ERR_EVENT_TOO_OLD');
    // A job nobody here submitted is refused however it is signed.
    expect(errorCode((await restarted.handle(deliver(finishedAgo(2 * DAY)))).body)).toBe('ERR_EVENT_TOO_OLD');
    expect(ran).toEqual([jobId]);
  });

  it('a rule that throws or rejects answers 500 ERR_LATE_EVENT_RULE_FAILED (the sender retries) and runs nothing', async () => {
    let ledgerUp = false;
    const rules = {
      throws: () => {
        if (!ledgerUp) throw new Error('ledger unreachable');
        return true;
      },
      rejects: async () => {
        if (!ledgerUp) throw new Error('ledger unreachable');
        return true;
      },
    };
    for (const rule of Object.values(rules)) {
      ledgerUp = false;
      const { r, handled } = receiver({ acceptLateEvent: rule });
      const late = deliver(finishedAgo(DAY));
      const res = await r.handle(late);
      expect(res.status).toBe(500);
      expect(JSON.parse(res.body)).toEqual({
        error: { code: 'ERR_LATE_EVENT_RULE_FAILED', message: expect.stringMatching(/^acceptLateEvent failed for job /) },
      });
      expect(res.body).not.toContain('ledger unreachable');
      expect(handled).toEqual([]);
      ledgerUp = true;
      expect((await r.handle(late)).status).toBe(200);
      expect(handled).toHaveLength(1);
    }
  });

  it('is not asked when maxEventAgeMs is false', async () => {
    let asked = 0;
    const { r, handled } = receiver({
      maxEventAgeMs: false,
      acceptLateEvent: () => {
        asked++;
        return false;
      },
    });
    expect((await r.handle(deliver(finishedAgo(30 * DAY)))).status).toBe(200);
    expect(asked).toBe(0);
    expect(handled).toHaveLength(1);
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
