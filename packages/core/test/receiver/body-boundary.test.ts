import { PassThrough } from 'node:stream';
// The body boundary in core: receiver.precheck recovers the signed digest before any body byte is
// read (the Fetch handler never pulls a byte of a body whose signature no key decodes), admitted
// bodies share maxBodyBytesInFlight (503 ERR_RECEIVER_BUSY + Retry-After past it) and must arrive
// within bodyTimeoutMs (checked here by value on fake timers).
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

describe('maxBodyBytesInFlight', () => {
  it('admits bodies while their declared lengths fit, answers 503 ERR_RECEIVER_BUSY with Retry-After past it, and admits again once shares come back', async () => {
    const { r, handled } = receiver({ maxBodyBytesInFlight: 3 * MIB, retryAfterSeconds: 9 });
    const delivery = buildSignedRequest();
    const first = r.precheck(head(MIB, delivery.signature));
    const second = r.precheck(head(MIB));
    expect(first.admission).toBeDefined();
    expect(second.admission).toBeDefined();
    expect(r.stats().bodyBytesInFlight).toBe(2 * MIB);
    // No Content-Length: the share is maxBodyBytes (1 MiB), which still fits; then nothing does.
    const chunked = r.precheck(head(undefined));
    expect(chunked.admission?.maxBytes).toBe(MIB);
    const busy = r.precheck(head(1));
    expect(busy.refusal).toMatchObject({ status: 503, headers: { 'retry-after': '9' }, outcome: { code: 'ERR_RECEIVER_BUSY' } });
    // A genuine delivery read under the first share: verified and handled, and its share given back.
    const done = await first.admission!.receive(delivery.body);
    expect(done.status).toBe(200);
    expect(handled).toEqual([delivery.event.job_id]);
    expect(r.stats().bodyBytesInFlight).toBe(2 * MIB);
    expect(r.precheck(head(MIB)).admission).toBeDefined();
    second.admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    chunked.admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    expect(r.stats().rejected).toMatchObject({ ERR_RECEIVER_BUSY: 1, ERR_BODY_INCOMPLETE: 2 });
  });

  it('defaults to 64 MiB shared by every receiver of the process: 64 bodies of 1 MiB are admitted, the 65th is not, by any receiver without a budget of its own', () => {
    const { r } = receiver();
    const { r: other } = receiver();
    const { r: own } = receiver({ maxBodyBytesInFlight: MIB });
    const signature = buildSignedRequest().signature;
    const admissions = [];
    for (let i = 0; i < 64; i++) admissions.push((i % 2 === 0 ? r : other).precheck(head(MIB, signature)).admission);
    expect(admissions.every((a) => a !== undefined)).toBe(true);
    expect(r.precheck(head(MIB, signature)).refusal?.outcome.code).toBe('ERR_RECEIVER_BUSY');
    expect(other.precheck(head(MIB, signature)).refusal?.outcome.code).toBe('ERR_RECEIVER_BUSY');
    expect(r.stats().bodyBytesInFlight).toBe(64 * MIB);
    expect(other.stats().bodyBytesInFlight).toBe(64 * MIB);
    // A receiver given a budget of its own does not draw on the process's.
    const mine = own.precheck(head(MIB, signature)).admission;
    expect(mine).toBeDefined();
    expect(own.stats().bodyBytesInFlight).toBe(MIB);
    mine!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    for (const admission of admissions) admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    expect(r.stats().bodyBytesInFlight).toBe(0);
    expect(r.precheck(head(MIB, signature)).admission?.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'gone')).status).toBe(400);
  });

  it('a budget from createBodyBudget is shared by the receivers given it, and by them only', () => {
    const budget = createBodyBudget(2 * MIB);
    const { r: a } = receiver({ maxBodyBytesInFlight: budget });
    const { r: b } = receiver({ maxBodyBytesInFlight: budget });
    const { r: outside } = receiver();
    const signature = buildSignedRequest().signature;
    const first = a.precheck(head(MIB, signature)).admission;
    const second = b.precheck(head(MIB, signature)).admission;
    expect([first, second].every((x) => x !== undefined)).toBe(true);
    expect(a.precheck(head(1, signature)).refusal?.outcome.code).toBe('ERR_RECEIVER_BUSY');
    expect(b.stats().bodyBytesInFlight).toBe(2 * MIB);
    expect(budget.reserved).toBe(2 * MIB);
    const free = outside.precheck(head(MIB, signature)).admission;
    expect(free).toBeDefined();
    for (const admission of [first, second, free]) admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    expect(budget.reserved).toBe(0);
  });

  it('a signature no key decodes never takes a share', () => {
    const { r } = receiver({ maxBodyBytesInFlight: MIB });
    for (let i = 0; i < 5; i++) expect(r.precheck(head(MIB, 'ab'.repeat(256))).refusal?.outcome.code).toBe('ERR_SIGNATURE_INVALID');
    expect(r.stats().bodyBytesInFlight).toBe(0);
    expect(r.precheck(head(MIB)).admission).toBeDefined();
  });
});

describe('bodyTimeoutMs', () => {
  it('defaults to 5,000 ms: the admission signal aborts with ERR_BODY_TIMEOUT then, not before, and the share comes back', () => {
    vi.useFakeTimers();
    const { r } = receiver();
    const { admission } = r.precheck(head(1000));
    vi.advanceTimersByTime(4999);
    expect(admission!.signal.aborted).toBe(false);
    expect(r.stats().bodyBytesInFlight).toBe(1000);
    vi.advanceTimersByTime(1);
    expect(admission!.signal.aborted).toBe(true);
    expect(admission!.signal.reason).toMatchObject({ code: 'ERR_BODY_TIMEOUT', status: 503 });
    expect(r.stats().bodyBytesInFlight).toBe(0);
    const answer = admission!.refuse(admission!.signal.reason as JobhookError);
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '30' }, outcome: { code: 'ERR_BODY_TIMEOUT' } });
  });

  it('takes the option: 1,000 ms', () => {
    vi.useFakeTimers();
    const { r } = receiver({ bodyTimeoutMs: 1000 });
    const { admission } = r.precheck(head(10));
    vi.advanceTimersByTime(999);
    expect(admission!.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(admission!.signal.aborted).toBe(true);
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

  it('a body larger than the shared 64 MiB (maxBodyBytes above it) reserves all of it: it is read alone', () => {
    const { r } = receiver({ maxBodyBytes: 100 * MIB });
    const { admission } = r.precheck(head(100 * MIB));
    expect(admission?.maxBytes).toBe(100 * MIB);
    expect(r.stats().bodyBytesInFlight).toBe(64 * MIB);
    expect(r.precheck(head(1)).refusal?.outcome.code).toBe('ERR_RECEIVER_BUSY');
    admission!.refuse(new JobhookError('ERR_BODY_INCOMPLETE', 'client went away'));
    expect(r.stats().bodyBytesInFlight).toBe(0);
  });

  it('createBodyBudget refuses a capacity that is not a positive whole number', () => {
    expect(() => createBodyBudget(0)).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    expect(() => createBodyBudget(1.5)).toThrow(/capacityBytes must be a positive whole number/);
  });
});
