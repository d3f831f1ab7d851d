// Recipient binding: with recipientSecret, a verified delivery runs the handler only when the job
// carried a tag made with that secret. Each attack is a delivery signed with the service's real key,
// as the service signs any organization's job aimed at this URL.
import { describe, expect, it, vi } from 'vitest';
import {
  constructEvent,
  createFetchHandler,
  createJsonLogger,
  createReceiver,
  createVerifier,
  silentLogger,
  type AsyncJobCompletedEvent,
  type Logger,
  type ReceiverOptions,
  type ReceiverResponse,
  type Verifier,
} from '../../src/index.js';
import { RECIPIENT_TAG_KEY, createRecipientTag } from '../../src/recipient/index.js';
import { buildSignedRequest, createTestKeyPair, type TestEventOverrides } from '../../src/testing/index.js';
import { codeOf } from '../helpers/error-code.js';

const keys = createTestKeyPair();
const SECRET = 'receiver-a-secret-0123456789abcdef';
const OLD_SECRET = 'receiver-a-old-secret-0123456789ab';
const B_SECRET = 'organization-b-secret-0123456789ab';
const URL_A = 'https://a.example.com/webhooks/jobs';
const HOUR = 3_600_000;

const tag = (secret = SECRET, webhookReceiver = URL_A, now = Date.now()): string =>
  createRecipientTag({ secret, webhookReceiver, now }).value;
const deliver = (overrides: TestEventOverrides = {}) => buildSignedRequest(overrides, { privateKey: keys.privateKey });
const errorOf = (body: string) => (JSON.parse(body) as { error?: { code: string; message: string } }).error;
/** The one body of every tag refusal: it names no cause (the service shows the submitter each answer). */
const REFUSED = { code: 'ERR_RECIPIENT_REFUSED', message: 'this job is not for this receiver' };

/** A 403 whose body is the generic refusal, while the outcome keeps the specific code. */
function expectRefused(answer: ReceiverResponse, code: string): void {
  expect([answer.status, JSON.parse(answer.body)]).toEqual([403, { error: REFUSED }]);
  expect(answer.outcome).toMatchObject({ kind: 'rejected', code });
}

function capture(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { logger: createJsonLogger({ write: (line) => void lines.push(JSON.parse(line)) }), lines };
}

function receiver(options: Partial<ReceiverOptions> = {}) {
  const handled: AsyncJobCompletedEvent[] = [];
  const { logger, lines } = capture();
  const r = createReceiver({ publicKeys: keys.publicKeyPem, logger, onEvent: (event) => void handled.push(event), ...options });
  return { r, handled, lines };
}

describe('createReceiver({ recipientSecret })', () => {
  it("refuses another organization's job aimed at this URL: 403, outcome ERR_RECIPIENT_TAG_MISSING, handler never runs", async () => {
    const { r, handled, lines } = receiver({ recipientSecret: SECRET });
    // B's job: its own output and user_parameters, signed by the service's one key.
    const forged = deliver({ output: { paid: true, amount: 1_000_000 }, user_parameters: { order_id: 'A-1001' } });
    const answer = await r.handle(forged);
    expectRefused(answer, 'ERR_RECIPIENT_TAG_MISSING');
    expect(answer.outcome).toMatchObject({ eventStatus: 'success' });
    expect((await r.handle(deliver())).status).toBe(403); // no user_parameters at all
    expect(handled).toEqual([]);
    expect(r.stats()).toMatchObject({ verified: 2, handled: 0, rejected: { ERR_RECIPIENT_TAG_MISSING: 2 } });
    // The refusal is a warning with its cause in the message; the secret is nowhere in the log.
    expect(lines[0]).toMatchObject({ level: 40, code: 'ERR_RECIPIENT_TAG_MISSING', reason: expect.stringContaining('(missing)') });
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });

  it('handles its own tagged job once, the tag hidden: user_parameters is the submitter’s object, absent when the tag was alone', async () => {
    const { r, handled } = receiver({ recipientSecret: SECRET });
    const own = deliver({ user_parameters: { order_id: 'A-1001', ['__proto__']: { x: 1 }, [RECIPIENT_TAG_KEY]: tag() } });
    expect((await r.handle(own)).status).toBe(200);
    expect(JSON.parse((await r.handle(own)).body)).toMatchObject({ duplicate: true });
    const alone = deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag() } });
    const answer = await r.handle(alone);
    expect(answer.status).toBe(200);
    expect(handled).toHaveLength(2);
    const [first, second] = handled as [AsyncJobCompletedEvent, AsyncJobCompletedEvent];
    expect(Object.keys(first.user_parameters!)).toEqual(['order_id', '__proto__']);
    expect(first.user_parameters!['order_id']).toBe('A-1001');
    expect(Object.getPrototypeOf(first.user_parameters)).toBe(Object.prototype);
    expect(first.user_parameters).not.toHaveProperty(RECIPIENT_TAG_KEY);
    expect('user_parameters' in second).toBe(false);
    expect(answer.event).toBe(second);
  });

  it('refuses a tag made with another secret: 403, outcome ERR_RECIPIENT_TAG_INVALID, cause mac in the log', async () => {
    const { r, handled, lines } = receiver({ recipientSecret: SECRET });
    const answer = await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(B_SECRET) } }));
    expectRefused(answer, 'ERR_RECIPIENT_TAG_INVALID');
    expect(lines[0]).toMatchObject({ code: 'ERR_RECIPIENT_TAG_INVALID', reason: expect.stringContaining('(mac)') });
    const malformed = await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: 12 } }));
    expectRefused(malformed, 'ERR_RECIPIENT_TAG_INVALID');
    expect(handled).toEqual([]);
  });

  it('answers every tag refusal with one body, whatever its cause: the answer is no oracle for whoever probes tags', async () => {
    const captured = capture();
    const probe = createReceiver({
      publicKeys: keys.publicKeyPem,
      logger: captured.logger,
      recipientSecret: SECRET,
      recipientUrl: URL_A,
      onEvent: () => {},
    });
    const copied = tag();
    expect((await probe.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: copied } }))).status).toBe(200);
    const probes: Array<[unknown, string, string]> = [
      [undefined, 'ERR_RECIPIENT_TAG_MISSING', 'missing'],
      ['v1.x', 'ERR_RECIPIENT_TAG_INVALID', 'malformed'],
      [tag(B_SECRET), 'ERR_RECIPIENT_TAG_INVALID', 'mac'],
      [tag(SECRET, 'https://elsewhere.example.com/'), 'ERR_RECIPIENT_TAG_INVALID', 'url'],
      [tag(SECRET, URL_A, Date.now() + HOUR), 'ERR_RECIPIENT_TAG_INVALID', 'future'],
      [tag(SECRET, URL_A, Date.now() - 7 * HOUR), 'ERR_RECIPIENT_TAG_EXPIRED', 'expired'],
      [copied, 'ERR_RECIPIENT_TAG_REUSED', 'reused'],
    ];
    const bodies = new Set<string>();
    const logged = new Set<string>();
    for (const [value, code, cause] of probes) {
      const lineCount = captured.lines.length;
      const answer = await probe.handle(deliver(value === undefined ? {} : { user_parameters: { [RECIPIENT_TAG_KEY]: value } }));
      expectRefused(answer, code);
      bodies.add(answer.body);
      // The cause is in the refusal's log line (one per code per minute), not in the answer.
      if (!logged.has(code))
        expect(captured.lines.slice(lineCount)).toEqual([expect.objectContaining({ code, reason: expect.stringContaining(`(${cause})`) })]);
      logged.add(code);
    }
    expect([...bodies]).toEqual([JSON.stringify({ error: REFUSED })]);
    expect(probe.stats().rejected).toEqual({
      ERR_RECIPIENT_TAG_MISSING: 1,
      ERR_RECIPIENT_TAG_INVALID: 4,
      ERR_RECIPIENT_TAG_EXPIRED: 1,
      ERR_RECIPIENT_TAG_REUSED: 1,
    });
  });

  it('refuses an expired tag (ERR_RECIPIENT_TAG_EXPIRED) even on a fresh event, and a tag from the future', async () => {
    const { r, handled } = receiver({ recipientSecret: SECRET });
    const old = tag(SECRET, URL_A, Date.now() - 6 * HOUR - 5 * 60_000 - 2000);
    const expired = await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: old } }));
    expectRefused(expired, 'ERR_RECIPIENT_TAG_EXPIRED');
    const future = await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(SECRET, URL_A, Date.now() + HOUR) } }));
    expectRefused(future, 'ERR_RECIPIENT_TAG_INVALID');
    const short = receiver({ recipientSecret: SECRET, recipientTagMaxAgeMs: 60_000, clockSkewMs: 0 });
    const twoMinutes = tag(SECRET, URL_A, Date.now() - 120_000);
    expectRefused(await short.r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: twoMinutes } })), 'ERR_RECIPIENT_TAG_EXPIRED');
    expect(handled).toEqual([]);
    expect(short.handled).toEqual([]);
  });

  it('with recipientUrl, refuses a tag made for another URL (cause url) and takes each listed URL', async () => {
    const { r, handled } = receiver({ recipientSecret: SECRET, recipientUrl: [URL_A, 'https://a-backup.example.com/jobs'] });
    const staging = await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(SECRET, 'https://staging.example.com/jobs') } }));
    expectRefused(staging, 'ERR_RECIPIENT_TAG_INVALID');
    expect(
      (await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(SECRET, 'HTTPS://A.example.com/webhooks/jobs') } }))).status,
    ).toBe(200);
    expect(
      (await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(SECRET, 'https://a-backup.example.com/jobs') } }))).status,
    ).toBe(200);
    expect(handled).toHaveLength(2);
  });

  it('during a rotation takes tags of both secrets, and refuses the old one once it is dropped', async () => {
    const rotating = receiver({ recipientSecret: [SECRET, OLD_SECRET] });
    expect((await rotating.r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(SECRET) } }))).status).toBe(200);
    expect((await rotating.r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(OLD_SECRET) } }))).status).toBe(200);
    expect((await rotating.r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(B_SECRET) } }))).status).toBe(403);
    const rotated = receiver({ recipientSecret: SECRET });
    expect((await rotated.r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(OLD_SECRET) } }))).status).toBe(403);
    expect(rotating.handled).toHaveLength(2);
  });

  it('checks after the signature and the payload shape, before the replay window and the claim', async () => {
    const { r, handled } = receiver({ recipientSecret: SECRET });
    const forged = deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag() } });
    const unsigned = { ...forged, headers: { ...forged.headers, 'x-service-signature': 'ab'.repeat(256) } };
    expect(errorOf((await r.handle(unsigned)).body)?.code).toBe('ERR_SIGNATURE_INVALID');
    expect(errorOf((await r.handle(deliver({ job_id: 'not-a-uuid' }))).body)?.code).toBe('ERR_PAYLOAD_INVALID');
    // An old untagged event gets the tag's code, not ERR_EVENT_TOO_OLD: the tag is checked first.
    expectRefused(await r.handle(deliver({ finished_at: '2019-01-01T00:00:00+00:00' })), 'ERR_RECIPIENT_TAG_MISSING');
    // A refused job left no claim: once tagged, the same job_id is handled (not answered "duplicate").
    const jobId = crypto.randomUUID();
    expect((await r.handle(deliver({ job_id: jobId }))).status).toBe(403);
    expect((await r.handle(deliver({ job_id: jobId, user_parameters: { [RECIPIENT_TAG_KEY]: tag() } }))).status).toBe(200);
    expect(handled.map((e) => e.job_id)).toEqual([jobId]);
  });

  it("recipientCheck: 'log' handles untagged and wrongly tagged jobs, warning once per cause per minute", async () => {
    const { r, handled, lines } = receiver({ recipientSecret: SECRET, recipientCheck: 'log' });
    expect((await r.handle(deliver({ user_parameters: { order_id: 'old-1' } }))).status).toBe(200);
    expect((await r.handle(deliver())).status).toBe(200);
    expect((await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(B_SECRET), order_id: 'x' } }))).status).toBe(200);
    expect((await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag() } }))).status).toBe(200);
    expect(handled).toHaveLength(4);
    expect(handled[2]!.user_parameters).toEqual({ order_id: 'x' }); // even a wrong tag is hidden
    const warnings = lines.filter((line) => String(line['msg']).includes("recipientCheck: 'log'"));
    expect(warnings).toEqual([
      expect.objectContaining({ level: 40, code: 'ERR_RECIPIENT_TAG_MISSING', cause: 'missing', jobId: handled[0]!.job_id }),
      expect.objectContaining({ level: 40, code: 'ERR_RECIPIENT_TAG_INVALID', cause: 'mac', jobId: handled[2]!.job_id }),
    ]);
    expect(r.stats()).toMatchObject({ handled: 4, rejected: {} });
  });

  it('without recipientSecret behaves as before: every verified job handled, user_parameters as it came', async () => {
    const { r, handled } = receiver();
    const value = tag(B_SECRET);
    expect((await r.handle(deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: value } }))).status).toBe(200);
    expect((await r.handle(deliver())).status).toBe(200);
    expect(handled[0]!.user_parameters).toEqual({ [RECIPIENT_TAG_KEY]: value });
  });

  it('refuses bad options at construction: ERR_OPTION_INVALID naming the option', () => {
    const make = (options: Partial<ReceiverOptions>) => () =>
      createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, ...options });
    expect(codeOf(make({ recipientSecret: 'short' }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(make({ recipientSecret: [] }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(make({ recipientSecret: SECRET, recipientCheck: 'off' as 'log' }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(make({ recipientSecret: SECRET, recipientUrl: 'ftp://a/b' }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(make({ recipientSecret: SECRET, recipientTagMaxAgeMs: 0 }))).toBe('ERR_OPTION_INVALID');
    // null is "not given" for the mode and the age (their defaults); a null logger is no logger.
    expect(() => make({ recipientSecret: SECRET, recipientCheck: null as never, recipientTagMaxAgeMs: null as never })()).not.toThrow();
    expect(codeOf(make({ recipientSecret: SECRET, recipientCheck: 'log', logger: null as never }))).toBe('ERR_OPTION_INVALID');
    // A URL or a mode without a secret would check nothing: said at startup, not discovered later.
    expect(() => make({ recipientUrl: URL_A })()).toThrow(/recipientUrl needs recipientSecret/);
    expect(() => make({ recipientCheck: 'enforce' })()).toThrow(/recipientCheck needs recipientSecret/);
  });

  it('applies through an adapter (the Fetch handler)', async () => {
    const handled: string[] = [];
    const handler = createFetchHandler({
      publicKeys: keys.publicKeyPem,
      logger: silentLogger,
      recipientSecret: SECRET,
      onEvent: (e) => void handled.push(e.job_id),
    });
    const post = (req: ReturnType<typeof deliver>) =>
      handler(new Request('https://a.example.com/webhooks/jobs', { method: 'POST', headers: req.headers, body: req.rawBody }));
    const refused = await post(deliver());
    expect([refused.status, await refused.json()]).toEqual([403, { error: REFUSED }]);
    const own = deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag() } });
    expect((await post(own)).status).toBe(200);
    expect(handled).toEqual([own.event.job_id]);
  });
});

describe('constructEvent({ recipientSecret })', () => {
  const construct = (req: ReturnType<typeof deliver>, options: Parameters<typeof constructEvent>[3]) =>
    constructEvent(req.rawBody, req.headers, keys.publicKeyPem, options);

  it('throws the receiver’s codes and returns the event without the tag', () => {
    expect(codeOf(() => construct(deliver(), { recipientSecret: SECRET }))).toBe('ERR_RECIPIENT_TAG_MISSING');
    const other = deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(B_SECRET) } });
    expect(codeOf(() => construct(other, { recipientSecret: SECRET }))).toBe('ERR_RECIPIENT_TAG_INVALID');
    const old = deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(SECRET, URL_A, Date.now() - 7 * HOUR) } });
    expect(codeOf(() => construct(old, { recipientSecret: SECRET }))).toBe('ERR_RECIPIENT_TAG_EXPIRED');
    const elsewhere = deliver({ user_parameters: { [RECIPIENT_TAG_KEY]: tag(SECRET, 'https://b.example.com/') } });
    expect(codeOf(() => construct(elsewhere, { recipientSecret: SECRET, recipientUrl: URL_A }))).toBe('ERR_RECIPIENT_TAG_INVALID');
    const own = deliver({ user_parameters: { n: 1, [RECIPIENT_TAG_KEY]: tag() } });
    expect(construct(own, { recipientSecret: [OLD_SECRET, SECRET] }).user_parameters).toEqual({ n: 1 });
  });

  it('leaves the payload of a verifier of another making as it was (it may keep it): the same cached result passes twice', () => {
    const inner = createVerifier({ publicKeys: keys.publicKeyPem });
    let kept: ReturnType<Verifier['verify']> | undefined;
    const caching: Verifier = { keyRing: inner.keyRing, profiles: inner.profiles, verify: (input) => (kept ??= inner.verify(input)) };
    const req = deliver({ user_parameters: { n: 1, [RECIPIENT_TAG_KEY]: tag() } });
    expect(constructEvent(req.rawBody, req.headers, caching, { recipientSecret: SECRET }).user_parameters).toEqual({ n: 1 });
    expect(constructEvent(req.rawBody, req.headers, caching, { recipientSecret: SECRET }).user_parameters).toEqual({ n: 1 });
    expect((kept!.payload.user_parameters as Record<string, unknown>)[RECIPIENT_TAG_KEY]).toEqual(expect.any(String));
  });

  it("in 'log' mode returns the event and warns through the given logger, once per cause per minute across calls", () => {
    const { logger, lines } = capture();
    const options = { recipientSecret: SECRET, recipientCheck: 'log', logger } as const;
    expect(construct(deliver(), options).status).toBe('success');
    expect(construct(deliver(), options).status).toBe('success');
    expect(lines).toEqual([expect.objectContaining({ code: 'ERR_RECIPIENT_TAG_MISSING', cause: 'missing' })]);
  });

  it("in 'log' mode without a logger, warns on stderr once per cause per minute across calls (one default logger, one rate limit)", () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const options = { recipientSecret: SECRET, recipientCheck: 'log' } as const;
      for (let i = 0; i < 3; i++) expect(construct(deliver(), options).status).toBe('success');
    } finally {
      spy.mockRestore();
    }
    const warnings = written.filter((line) => line.includes('ERR_RECIPIENT_TAG_MISSING'));
    expect(warnings).toHaveLength(1);
  });
});
