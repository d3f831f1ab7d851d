import { PassThrough } from 'node:stream';
// The body boundary in core: receiver.precheck recovers the signed digest before any body byte is
// read (the Fetch handler never pulls a byte of a body whose signature no key decodes); admitted
// bodies are charged to maxBodyBytesInFlight as their bytes arrive (503 ERR_RECEIVER_BUSY +
// Retry-After past it, or past a client's share under pressure), one per signature and client, and
// must start and keep a pace (checked here by value on fake timers).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBodyBudget, createFetchHandler, createReceiver, JobhookError, silentLogger, type ReceiverOptions } from '../../src/index.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';
import { readCappedBody, readNodeBody } from '../../src/adapter/index.js';

const keys = createTestKeyPair();
const MIB = 1024 * 1024;

function receiver(options: Partial<ReceiverOptions> = {}) {
  const handled: string[] = [];
  const r = createReceiver({
    publicKeys: keys.publicKeyPem,
    onEvent: (e) => void handled.push(e.job_id),
    logger: silentLogger,
    ...options,
  });
  return { r, handled };
}

/** A request head that declares `length` bytes, with a real signature (over another body). */
function head(length: number | undefined, signature = buildSignedRequest().signature) {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-service-signature': signature };
  if (length !== undefined) headers['content-length'] = String(length);
  return { method: 'POST', headers };
}

/** A body stream that counts the reads asked of it (highWaterMark 0: nothing is read ahead). */
function countedBody(bytes: Uint8Array): { body: ReadableStream<Uint8Array>; pulls: () => number } {
  let pulls = 0;
  let sent = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulls++;
        if (sent) controller.close();
        else controller.enqueue(bytes);
        sent = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulls: () => pulls };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the Fetch handler reads no body behind a signature no key decodes', () => {
  const URL_ = 'https://receiver.example/webhooks/jobs';

  it('a made-up signature of the right length: 401 ERR_SIGNATURE_INVALID, zero reads of the body', async () => {
    const handler = createFetchHandler({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger });
    const { body, pulls } = countedBody(Buffer.from(buildSignedRequest().body));
    const request = new Request(URL_, {
      method: 'POST',
      headers: head(undefined, 'ab'.repeat(256)).headers,
      body,
      duplex: 'half',
    } as RequestInit);
    const res = await handler(request);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_SIGNATURE_INVALID');
    expect(pulls()).toBe(0);
    expect(handler.receiver.stats()).toMatchObject({ received: 1, verified: 0, bodyBytesInFlight: 0 });
  });

  it('the same body under its real signature is read and handled (the counter sees reads)', async () => {
    const handler = createFetchHandler({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger });
    const delivery = buildSignedRequest();
    const { body, pulls } = countedBody(Buffer.from(delivery.body));
    const res = await handler(new Request(URL_, { method: 'POST', headers: delivery.headers, body, duplex: 'half' } as RequestInit));
    expect(res.status).toBe(200);
    expect(pulls()).toBeGreaterThan(0);
    expect(handler.receiver.stats()).toMatchObject({ handled: 1, bodyBytesInFlight: 0 });
  });

  it('receiver.handle decodes the signature once, before the body is parsed: a made-up one over a malformed body is 401, not 400', async () => {
    const { r } = receiver();
    const res = await r.handle({ ...head(undefined, 'ab'.repeat(256)), rawBody: '{"not json' });
    expect([res.status, res.outcome.code]).toEqual([401, 'ERR_SIGNATURE_INVALID']);
  });
});

describe('maxBodyBytesInFlight: bodies are charged as their bytes arrive', () => {
  it('an announced Content-Length reserves nothing: 100 heads announcing 1 MiB each hold 0 bytes, and a genuine delivery is handled', async () => {
    const { r, handled } = receiver({ maxBodyBytesInFlight: 2 * MIB });
    const replayed = buildSignedRequest().signature;
    const held = [];
    for (let i = 0; i < 100; i++) held.push(r.precheck({ ...head(MIB, replayed), clientAddress: `10.0.${i >> 8}.${i & 255}` }).admission);
    expect(held.every((a) => a !== undefined)).toBe(true);
    expect(r.stats().bodyBytesInFlight).toBe(0);
    const delivery = buildSignedRequest();
    const { admission } = r.precheck({ ...delivery, clientAddress: '203.0.113.9' });
    expect(admission!.charge!(delivery.body.length)).toBeUndefined();
    expect(r.stats().bodyBytesInFlight).toBe(delivery.body.length);
    expect((await admission!.receive(delivery.body)).status).toBe(200);
    expect(handled).toEqual([delivery.event.job_id]);
    for (const a of held) a!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    expect(r.stats().bodyBytesInFlight).toBe(0);
  });

  it('a chunk past the capacity is refused 503 ERR_RECEIVER_BUSY with Retry-After, and every charged byte comes back on refuse and receive', async () => {
    const { r } = receiver({ maxBodyBytesInFlight: 3 * MIB, retryAfterSeconds: 9 });
    const a = r.precheck({ ...head(MIB), clientAddress: '198.51.100.1' }).admission!;
    const b = r.precheck({ ...head(MIB), clientAddress: '198.51.100.2' }).admission!;
    const c = r.precheck({ ...head(MIB), clientAddress: '198.51.100.3' }).admission!;
    expect(a.charge!(MIB)).toBeUndefined();
    expect(b.charge!(MIB)).toBeUndefined();
    expect(c.charge!(MIB - 10)).toBeUndefined();
    const refused = c.charge!(11);
    expect(refused).toMatchObject({ code: 'ERR_RECEIVER_BUSY', status: 503 });
    expect(c.refuse(refused!)).toMatchObject({ status: 503, headers: { 'retry-after': '9' }, outcome: { code: 'ERR_RECEIVER_BUSY' } });
    expect(r.stats().bodyBytesInFlight).toBe(2 * MIB);
    a.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    const delivery = buildSignedRequest();
    expect((await b.receive(delivery.body)).status).toBe(401); // another signature's body: refused, its charge back
    expect(r.stats().bodyBytesInFlight).toBe(0);
  });

  it('under pressure a client reading many bodies is charged no more, while a client reading one body is', () => {
    const budget = createBodyBudget(16 * MIB);
    const { r } = receiver({ maxBodyBytesInFlight: budget });
    const attacker = [];
    // 12 MiB (3/4) from one address fills up to the pressure mark; past it, with 11 MiB in its other
    // bodies (far over 1/256 of the capacity), the attacker's next chunk is refused.
    for (let i = 0; i < 13; i++) attacker.push(r.precheck({ ...head(MIB), clientAddress: '192.0.2.66' }).admission!);
    const charged = attacker.map((a) => a.charge!(MIB));
    expect(charged.slice(0, 12).every((e) => e === undefined)).toBe(true);
    expect(charged[12]).toMatchObject({ code: 'ERR_RECEIVER_BUSY', detail: { cause: 'client-share' } });
    expect(budget.reservedBy('192.0.2.66')).toBe(12 * MIB);
    // The service's own address still reads its delivery, chunk after chunk, in the last quarter.
    const genuine = r.precheck({ ...buildSignedRequest(), clientAddress: '203.0.113.9' }).admission!;
    for (let i = 0; i < 8; i++) expect(genuine.charge!(64 * 1024)).toBeUndefined();
    expect(budget.reservedBy('203.0.113.9')).toBe(512 * 1024);
    // A second address with one body at a time goes on too; a second body of it, once its first holds
    // 1/256 of the capacity (64 KiB of 16 MiB), does not.
    const other = r.precheck({ ...head(MIB), clientAddress: '198.51.100.7' }).admission!;
    expect(other.charge!(64 * 1024)).toBeUndefined();
    const second = r.precheck({ ...head(MIB), clientAddress: '198.51.100.7' }).admission!;
    expect(second.charge!(1024)).toMatchObject({ code: 'ERR_RECEIVER_BUSY', detail: { cause: 'client-share' } });
    for (const a of [...attacker, genuine, other, second]) a.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone'));
    expect(budget.reserved).toBe(0);
  });

  it('a lone body of maxBodyBytes is read whole when the budget is just as large (no share rule against a client alone)', () => {
    const { r } = receiver({ maxBodyBytes: 900 * 1024, maxBodyBytesInFlight: 900 * 1024 });
    const { admission } = r.precheck({ ...head(900 * 1024), clientAddress: '203.0.113.9' });
    for (let i = 0; i < 900; i++) expect(admission!.charge!(1024)).toBeUndefined();
    expect(r.stats().bodyBytesInFlight).toBe(900 * 1024);
    admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone'));
  });

  it('a charge of 0 bytes is no charge, and leaves no entry behind', () => {
    const budget = createBodyBudget(MIB);
    expect(budget.tryReserve(0, '192.0.2.1')).toBe(true);
    expect(budget.reservedBy('192.0.2.1')).toBe(0);
    expect(budget.reserved).toBe(0);
  });

  it('IPv6 clients share one share per /64, and an IPv4-mapped address is its IPv4 one', () => {
    const budget = createBodyBudget(16 * MIB);
    const { r } = receiver({ maxBodyBytesInFlight: budget });
    const signature = buildSignedRequest().signature;
    const a = r.precheck({ ...head(MIB, signature), clientAddress: '2001:db8:1:2::1' }).admission!;
    // Same /64, same signature: one body at a time; another signature is admitted and charged to the same share.
    expect(r.precheck({ ...head(MIB, signature), clientAddress: '2001:db8:1:2:ffff::9' }).refusal?.outcome.code).toBe('ERR_RECEIVER_BUSY');
    const b = r.precheck({ ...head(MIB), clientAddress: '2001:db8:1:2:ffff::9' }).admission!;
    expect(a.charge!(100)).toBeUndefined();
    expect(b.charge!(50)).toBeUndefined();
    expect(budget.reservedBy('2001:db8:1:2::/64')).toBe(150);
    const c = r.precheck({ ...head(MIB, signature), clientAddress: '::ffff:192.0.2.7' }).admission!;
    expect(c.charge!(7)).toBeUndefined();
    expect(budget.reservedBy('192.0.2.7')).toBe(7);
    for (const x of [a, b, c]) x.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone'));
  });

  it('one body at a time per signature and client: a replayed signature on a second connection is 503 at once (Retry-After: what the holder has left), another client (the service) is admitted', () => {
    vi.useFakeTimers();
    const { r } = receiver({ retryAfterSeconds: 30 });
    const captured = buildSignedRequest();
    const first = r.precheck({ ...head(MIB, captured.signature), clientAddress: '192.0.2.66' });
    expect(first.admission).toBeDefined();
    const again = r.precheck({ ...head(MIB, captured.signature.toUpperCase()), clientAddress: '192.0.2.66' });
    expect(again.refusal).toMatchObject({ status: 503, headers: { 'retry-after': '2' }, outcome: { code: 'ERR_RECEIVER_BUSY' } });
    const service = r.precheck({ ...captured, clientAddress: '203.0.113.9' });
    expect(service.admission).toBeDefined();
    first.admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone'));
    expect(r.precheck({ ...head(MIB, captured.signature), clientAddress: '192.0.2.66' }).admission).toBeDefined();
  });

  it('an admission dropped without receive or refuse frees its signature at its deadline', () => {
    vi.useFakeTimers();
    const { r } = receiver();
    const signature = buildSignedRequest().signature;
    expect(r.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.66' }).admission).toBeDefined(); // never used
    expect(r.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.66' }).refusal?.outcome.code).toBe('ERR_RECEIVER_BUSY');
    vi.advanceTimersByTime(2000);
    expect(r.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.66' }).admission).toBeDefined();
  });

  it('without a client address the one-body rule is off: whoever replays a genuine signature cannot hold its delivery', () => {
    const { r } = receiver();
    const captured = buildSignedRequest();
    expect(r.precheck(head(MIB, captured.signature)).admission).toBeDefined(); // held by a replay
    const service = r.precheck(captured);
    expect(service.admission).toBeDefined();
  });

  it('zone ids and NAT64 addresses name the client they carry', () => {
    const budget = createBodyBudget(16 * MIB);
    const { r } = receiver({ maxBodyBytesInFlight: budget });
    r.precheck({ ...head(MIB), clientAddress: 'fe80::1%eth0' }).admission!.charge!(5);
    r.precheck({ ...head(MIB), clientAddress: '64:ff9b::c000:207' }).admission!.charge!(9);
    expect(budget.reservedBy('fe80:0:0:0::/64')).toBe(5);
    expect(budget.reservedBy('192.0.2.7')).toBe(9);
  });

  it('defaults to 64 MiB shared by every receiver of the process', () => {
    const { r } = receiver();
    const { r: other } = receiver();
    const { r: own } = receiver({ maxBodyBytesInFlight: MIB });
    const signature = buildSignedRequest().signature;
    const a = r.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.1' }).admission!;
    const b = other.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.2' }).admission!;
    expect(a.charge!(MIB)).toBeUndefined();
    expect(b.charge!(MIB)).toBeUndefined();
    expect(r.stats().bodyBytesInFlight).toBe(2 * MIB);
    expect(other.stats().bodyBytesInFlight).toBe(2 * MIB);
    expect(own.stats().bodyBytesInFlight).toBe(0);
    a.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone'));
    b.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone'));
    expect(r.stats().bodyBytesInFlight).toBe(0);
  });

  it('a budget from createBodyBudget is shared by the receivers given it, and by them only', () => {
    const budget = createBodyBudget(2 * MIB);
    const { r: a } = receiver({ maxBodyBytesInFlight: budget });
    const { r: b } = receiver({ maxBodyBytesInFlight: budget });
    const { r: outside } = receiver();
    const signature = buildSignedRequest().signature;
    const first = a.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.1' }).admission!;
    const second = b.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.2' }).admission!;
    expect(first.charge!(MIB)).toBeUndefined();
    expect(second.charge!(MIB)).toBeUndefined();
    expect(budget.reserved).toBe(2 * MIB);
    const free = outside.precheck({ ...head(MIB, signature), clientAddress: '192.0.2.3' }).admission!;
    expect(free.charge!(MIB)).toBeUndefined();
    expect(budget.reserved).toBe(2 * MIB);
    for (const admission of [first, second, free]) admission.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    expect(budget.reserved).toBe(0);
  });

  it('a signature no key decodes is never admitted', () => {
    const { r } = receiver({ maxBodyBytesInFlight: MIB });
    for (let i = 0; i < 5; i++) expect(r.precheck(head(MIB, 'ab'.repeat(256))).refusal?.outcome.code).toBe('ERR_SIGNATURE_INVALID');
    expect(r.stats().bodyBytesInFlight).toBe(0);
  });
});

describe('body pace: bodyStartTimeoutMs, minBodyBytesPerSecond, bodyTimeoutMs', () => {
  it('a body that never starts is cut 2,000 ms after its head (the default), 503 ERR_BODY_TIMEOUT + Retry-After', () => {
    vi.useFakeTimers();
    const { r } = receiver();
    const { admission } = r.precheck(head(MIB));
    vi.advanceTimersByTime(1999);
    expect(admission!.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(admission!.signal.reason).toMatchObject({ code: 'ERR_BODY_TIMEOUT', status: 503, detail: { cause: 'start' } });
    const answer = admission!.refuse(admission!.signal.reason as JobhookError);
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '30' }, outcome: { code: 'ERR_BODY_TIMEOUT' } });
  });

  it('a trickle (100 bytes every 200 ms, 500 B/s) is cut once it falls behind 16 KiB/s, and its charge comes back', () => {
    vi.useFakeTimers();
    const { r } = receiver();
    const { admission } = r.precheck({ ...head(MIB), clientAddress: '192.0.2.66' });
    let sent = 0;
    let cutAt = -1;
    admission!.onDeadline!(() => {
      cutAt = sent;
    });
    for (let t = 0; t < 10_000 && cutAt < 0; t += 200) {
      if (admission!.charge!(100) !== undefined) break;
      sent += 100;
      vi.advanceTimersByTime(200);
    }
    // 2 s of grace plus 100 bytes' worth (6 ms) per chunk: cut after about 2 s, with ~1 KB sent.
    expect(cutAt).toBeGreaterThan(0);
    expect(cutAt).toBeLessThanOrEqual(1100);
    expect(admission!.signal.reason).toMatchObject({ code: 'ERR_BODY_TIMEOUT', detail: { cause: 'rate' } });
    expect(r.stats().bodyBytesInFlight).toBe(0);
    expect(admission!.charge!(100)).toMatchObject({ code: 'ERR_BODY_TIMEOUT' });
  });

  it('a body at the pace keeps going: 64 KiB every 1 s of a 256 KiB body, then bodyTimeoutMs caps the whole', () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyTimeoutMs: 10_000 });
    const { admission } = r.precheck(head(MIB));
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(1000);
      expect(admission!.charge!(64 * 1024)).toBeUndefined();
    }
    vi.advanceTimersByTime(5000);
    expect(admission!.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(admission!.signal.reason).toMatchObject({ code: 'ERR_BODY_TIMEOUT', detail: { cause: 'deadline' } });
  });

  it('takes the options: bodyStartTimeoutMs 500, minBodyBytesPerSecond 1,000', () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyStartTimeoutMs: 500, minBodyBytesPerSecond: 1000 });
    const { admission } = r.precheck(head(MIB));
    vi.advanceTimersByTime(400);
    expect(admission!.charge!(1000)).toBeUndefined(); // due at 500 + 1,000 ms
    vi.advanceTimersByTime(1099);
    expect(admission!.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(admission!.signal.reason).toMatchObject({ code: 'ERR_BODY_TIMEOUT', detail: { cause: 'rate' } });
  });

  it('stops once the body is received: no abort afterwards', async () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyTimeoutMs: 1000 });
    const delivery = buildSignedRequest();
    const { admission } = r.precheck(delivery);
    expect((await admission!.receive(delivery.body)).status).toBe(200);
    vi.advanceTimersByTime(5000);
    expect(admission!.signal.aborted).toBe(false);
  });
});

describe('body readers stop at the admission deadline through onDeadline, without an AbortSignal', () => {
  /** A request stream that sends `first` bytes and then nothing (a slow or stalled sender). */
  function stalledRequest(first: string): PassThrough & { headers: Record<string, string> } {
    const stream = Object.assign(new PassThrough(), { headers: {} as Record<string, string> });
    stream.write(first);
    return stream;
  }

  it('readNodeBody: the deadline rejects with ERR_BODY_TIMEOUT, its listeners are removed, and no AbortSignal is made', async () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyTimeoutMs: 1000 });
    const { admission } = r.precheck(head(100));
    const signal = vi.spyOn(admission!, 'signal', 'get');
    const req = stalledRequest('{"job');
    const read = readNodeBody(req, admission!);
    const settled = read.catch((err: unknown) => err);
    vi.advanceTimersByTime(1000);
    expect(await settled).toMatchObject({ code: 'ERR_BODY_TIMEOUT', status: 503 });
    expect(req.listenerCount('data') + req.listenerCount('end') + req.listenerCount('close')).toBe(0);
    expect(signal).not.toHaveBeenCalled();
  });

  it('readCappedBody: the deadline cancels the stream and throws ERR_BODY_TIMEOUT; past it, nothing is read', async () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyTimeoutMs: 1000 });
    const { admission } = r.precheck(head(100));
    let cancelled: unknown;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"job'));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const settled = readCappedBody({ headers: new Headers(), body }, admission!, () => new Error('too large')).catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await settled).toMatchObject({ code: 'ERR_BODY_TIMEOUT' });
    expect(cancelled).toMatchObject({ code: 'ERR_BODY_TIMEOUT' });

    const counted = countedBody(new Uint8Array(5));
    const late = readCappedBody({ headers: new Headers(), body: counted.body }, admission!, () => new Error('x'));
    await expect(late).rejects.toMatchObject({ code: 'ERR_BODY_TIMEOUT' });
    expect(counted.pulls()).toBe(0);
  });

  it('readNodeBody past the deadline: ERR_BODY_TIMEOUT, the stream left as it was (not paused, nothing read)', async () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyTimeoutMs: 1000 });
    const { admission } = r.precheck(head(100));
    vi.advanceTimersByTime(1000);
    const req = stalledRequest('{"job');
    await expect(readNodeBody(req, admission!)).rejects.toMatchObject({ code: 'ERR_BODY_TIMEOUT' });
    expect(req.readableFlowing).toBe(null);
    expect(req.listenerCount('data')).toBe(0);
  });

  it('onDeadline calls a listener at once when the deadline has passed, and never after its unsubscribe', () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyTimeoutMs: 1000 });
    const first = r.precheck(head(10)).admission!;
    const gone = vi.fn();
    first.onDeadline!(gone)();
    vi.advanceTimersByTime(1000);
    expect(gone).not.toHaveBeenCalled();
    const late = vi.fn();
    first.onDeadline!(late);
    expect(late).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_BODY_TIMEOUT' }));
  });
});

describe('options', () => {
  it.each([
    ['bodyTimeoutMs 0', { bodyTimeoutMs: 0 }, /bodyTimeoutMs must be an integer from 1/],
    ['bodyTimeoutMs 1.5', { bodyTimeoutMs: 1.5 }, /bodyTimeoutMs must be an integer from 1/],
    ['bodyTimeoutMs beyond a timer', { bodyTimeoutMs: 2 ** 31 }, /bodyTimeoutMs must be an integer from 1 to 2147483647/],
    ['bodyStartTimeoutMs 0', { bodyStartTimeoutMs: 0 }, /bodyStartTimeoutMs must be an integer from 1/],
    ['minBodyBytesPerSecond -1', { minBodyBytesPerSecond: -1 }, /minBodyBytesPerSecond must be/],
    [
      'maxBodyBytesInFlight "64MB"',
      { maxBodyBytesInFlight: '64MB' as unknown as number },
      /maxBodyBytesInFlight must be a positive integer/,
    ],
    [
      'maxBodyBytesInFlight under maxBodyBytes',
      { maxBodyBytes: 2 * MIB, maxBodyBytesInFlight: MIB },
      /maxBodyBytesInFlight \(1048576\) must not be less than maxBodyBytes \(2097152\)/,
    ],
  ])('%s: ERR_OPTION_INVALID naming the option', (_what, options, message) => {
    let err: unknown;
    try {
      receiver(options as Partial<ReceiverOptions>);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'ERR_OPTION_INVALID' });
    expect((err as Error).message).toMatch(/^createReceiver: /);
    expect((err as Error).message).toMatch(message);
  });

  it('maxBodyBytes above the shared 64 MiB without a budget of its own is refused at construction (such a body could never be charged)', () => {
    expect(() => receiver({ maxBodyBytes: 100 * MIB })).toThrow(/give maxBodyBytesInFlight of at least maxBodyBytes/);
    expect(() => receiver({ maxBodyBytes: 100 * MIB, maxBodyBytesInFlight: 100 * MIB })).not.toThrow();
  });

  it('createBodyBudget refuses a capacity that is not a positive whole number', () => {
    expect(() => createBodyBudget(0)).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    expect(() => createBodyBudget(1.5)).toThrow(/capacityBytes must be a positive whole number/);
  });
});
