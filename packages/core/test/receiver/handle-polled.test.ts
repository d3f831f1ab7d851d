import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryLedger } from '../../src/ledger/index.js';
import { createReceiver, silentLogger, type AsyncJobCompletedEvent, type HandlerContext } from '../../src/index.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';
import { createRecipientTag, RECIPIENT_TAG_KEY } from '../../src/recipient/index.js';

const keys = createTestKeyPair();

/** A poll answer as the reference service gives it (only job_id, status, output / error are guaranteed). */
function pollAnswer(jobId: string, status: 'success' | 'fail' = 'success'): Record<string, unknown> {
  return status === 'success'
    ? { job_id: jobId, status, output: { text: 'hello' }, cost: '0.01' }
    : { job_id: jobId, status, error: { message: 'provider failed', error_code: 'provider_error' } };
}

function setup(options: { handlerMs?: number; failFirst?: boolean } = {}) {
  const calls: Array<{ event: AsyncJobCompletedEvent; ctx: HandlerContext }> = [];
  let failures = options.failFirst === true ? 1 : 0;
  const ledger = createMemoryLedger();
  const receiver = createReceiver({
    publicKeys: keys.publicKeyPem,
    logger: silentLogger,
    ledger,
    async onEvent(event, ctx) {
      if (options.handlerMs !== undefined) await new Promise((r) => setTimeout(r, options.handlerMs));
      if (failures > 0) {
        failures--;
        throw new Error('handler down');
      }
      calls.push({ event, ctx });
    },
  });
  return { receiver, calls, ledger };
}

describe('receiver.handlePolled', () => {
  it('hands big integers as the webhook path does (strings by default), at any depth, leaving the answer given as it was', async () => {
    const big = 123456789012345678901234567890n;
    const output = JSON.parse('{"n":1,"__proto__":{"x":2},"rows":[{"id":1},{"id":2}],"flat":[1,2]}') as Record<string, unknown>;
    (output['rows'] as Array<Record<string, unknown>>)[1]!['id'] = big;
    // The member named __proto__ (an own property, as JSON.parse makes it), not the prototype.
    (Object.getOwnPropertyDescriptor(output, '__proto__')?.value as Record<string, unknown>)['x'] = big;
    for (const [bigIntegers, expected] of [
      ['string', String(big)],
      ['bigint', big],
    ] as const) {
      const seen: AsyncJobCompletedEvent[] = [];
      const receiver = createReceiver({
        publicKeys: keys.publicKeyPem,
        logger: silentLogger,
        bigIntegers,
        onEvent: (e) => void seen.push(e),
      });
      const answer = { job_id: randomUUID(), status: 'success', output };
      expect((await receiver.handlePolled(answer as never)).kind).toBe('handled');
      const got = (seen[0] as unknown as { output: Record<string, unknown> }).output;
      expect(got['rows']).toEqual([{ id: 1 }, { id: expected }]);
      expect(Object.hasOwn(got, '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(got, '__proto__')?.value).toEqual({ x: expected });
      expect(got['flat']).toEqual([1, 2]);
      expect((output['rows'] as Array<Record<string, unknown>>)[1]!['id']).toBe(big);
    }
  });

  it('drops the recipient tag from user_parameters, as the webhook path does, without touching the answer given', async () => {
    const secret = 'a-receiver-secret-0123456789abcdef';
    const tag = createRecipientTag({ secret, webhookReceiver: 'https://me.example/hooks' });
    for (const bigIntegers of ['string', 'bigint'] as const) {
      const seen: AsyncJobCompletedEvent[] = [];
      // With and without recipientSecret: a poll never needs the tag, and a handler must not hand it on.
      for (const recipient of [{}, { recipientSecret: secret }]) {
        const receiver = createReceiver({
          publicKeys: keys.publicKeyPem,
          logger: silentLogger,
          bigIntegers,
          ...recipient,
          onEvent: (e) => void seen.push(e),
        });
        const answer = { ...pollAnswer(randomUUID()), user_parameters: { order: 7, [RECIPIENT_TAG_KEY]: tag.value } };
        expect((await receiver.handlePolled(answer as never)).kind).toBe('handled');
        expect(seen.at(-1)?.user_parameters).toEqual({ order: 7 });
        expect(answer.user_parameters).toEqual({ order: 7, [RECIPIENT_TAG_KEY]: tag.value });
        const alone = { ...pollAnswer(randomUUID()), user_parameters: { [RECIPIENT_TAG_KEY]: tag.value } };
        expect((await receiver.handlePolled(alone as never)).kind).toBe('handled');
        expect('user_parameters' in seen.at(-1)!).toBe(false);
      }
      expect(JSON.stringify(seen)).not.toContain(tag.value);
    }
  });

  it('runs the handlers with source "poll": the guaranteed fields, null for the webhook attributes the answer lacks', async () => {
    const { receiver, calls } = setup();
    const jobId = randomUUID().toUpperCase();
    expect(await receiver.handlePolled({ ...pollAnswer(jobId), provider: 'amazon' } as never)).toEqual({
      kind: 'handled',
      jobId: jobId.toLowerCase(),
    });
    expect(calls).toHaveLength(1);
    const [{ event, ctx }] = calls as [(typeof calls)[0]];
    expect(ctx).toMatchObject({ source: 'poll', jobId: jobId.toLowerCase(), profile: null, keyId: null, headers: {} });
    expect(event).toMatchObject({
      event: 'async_job_completed',
      job_id: jobId,
      status: 'success',
      output: { text: 'hello' },
      cost: '0.01',
    });
    expect(event).toMatchObject({ provider: 'amazon', feature: null, subfeature: null, model: null, created_at: null, finished_at: null });
  });

  it('a failed job reaches onFail with its error', async () => {
    const onFail = vi.fn();
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, logger: silentLogger, onSuccess: () => {}, onFail });
    const jobId = randomUUID();
    expect((await receiver.handlePolled(pollAnswer(jobId, 'fail') as never)).kind).toBe('handled');
    expect(onFail.mock.calls[0]?.[0]).toMatchObject({ status: 'fail', error: { message: 'provider failed' } });
  });

  it('the webhook after a poll is a duplicate, and a poll after the webhook too: one handler run either way', async () => {
    const { receiver, calls } = setup();
    const pollFirst = buildSignedRequest({ status: 'success' });
    expect((await receiver.handlePolled(pollAnswer(pollFirst.event.job_id) as never)).kind).toBe('handled');
    const late = await receiver.handle(pollFirst);
    expect(late.outcome.kind).toBe('duplicate');

    const webhookFirst = buildSignedRequest({ status: 'success' });
    expect((await receiver.handle(webhookFirst)).outcome.kind).toBe('handled');
    expect(await receiver.handlePolled(pollAnswer(webhookFirst.event.job_id) as never)).toEqual({
      kind: 'duplicate',
      jobId: webhookFirst.event.job_id,
    });
    expect(calls.map((c) => c.ctx.source)).toEqual(['poll', 'webhook']);
  });

  it('webhook and poll of one job arriving together: handled once, the other told in flight or duplicate', async () => {
    const { receiver, calls } = setup({ handlerMs: 50 });
    const req = buildSignedRequest({ status: 'success' });
    const [webhook, polled] = await Promise.all([receiver.handle(req), receiver.handlePolled(pollAnswer(req.event.job_id) as never)]);
    expect(calls).toHaveLength(1);
    const kinds = [webhook.outcome.kind, polled.kind].sort();
    expect(kinds).toEqual(['handled', 'in-flight']);
    if (polled.kind === 'in-flight') expect(polled.retryAfterMs).toBeGreaterThan(0);
    // The loser's next try (the sender's retry, or the reconciler's next poll) finds it done.
    expect((await receiver.handle(req)).outcome.kind).toBe('duplicate');
    expect((await receiver.handlePolled(pollAnswer(req.event.job_id) as never)).kind).toBe('duplicate');
    expect(calls).toHaveLength(1);
  });

  it('a failing handler releases the claim: handler-failed with its error, the next poll handles it', async () => {
    const { receiver, calls } = setup({ failFirst: true });
    const jobId = randomUUID();
    const first = await receiver.handlePolled(pollAnswer(jobId) as never);
    expect(first.kind).toBe('handler-failed');
    expect((first.error as Error).message).toBe('handler down');
    expect((await receiver.handlePolled(pollAnswer(jobId) as never)).kind).toBe('handled');
    expect(calls).toHaveLength(1);
  });

  it('an answer that is not a finished job is rejected without running anything', async () => {
    const { receiver, calls } = setup();
    const jobId = randomUUID();
    for (const answer of [
      { job_id: jobId, status: 'processing' },
      { job_id: 'not-a-uuid', status: 'success', output: {} },
      { job_id: jobId, status: 'success' },
      { job_id: jobId, status: 'fail', error: { error_code: 'x' } },
      null,
    ]) {
      const outcome = await receiver.handlePolled(answer as never);
      expect(outcome.kind).toBe('rejected');
      expect((outcome.error as { code?: string }).code).toBe('ERR_PAYLOAD_INVALID');
    }
    expect(calls).toHaveLength(0);
  });

  it('settles the ledger when a job is handled or found handled, by webhook or poll', async () => {
    const { receiver, ledger } = setup();
    const [a, b] = [buildSignedRequest({ status: 'success' }), buildSignedRequest({ status: 'success' })];
    await ledger.begin('key-a', { dueAt: Date.now() + 60_000 });
    await ledger.attach('key-a', a.event.job_id);
    await ledger.begin('key-b', { dueAt: Date.now() + 60_000 });
    await ledger.attach('key-b', b.event.job_id);
    expect((await receiver.handle(a)).outcome.kind).toBe('handled');
    expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
    // b was handled before the ledger knew it (e.g. by another receiver without a ledger): the poll finds it done.
    await receiver.handlePolled(pollAnswer(b.event.job_id) as never);
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 0 });
  });

  it('a webhook for a job the ledger does not hold is handled all the same', async () => {
    const { receiver, calls, ledger } = setup();
    await ledger.begin('key-unrelated', { dueAt: Date.now() + 60_000 });
    expect((await receiver.handle(buildSignedRequest({ status: 'success' }))).outcome.kind).toBe('handled');
    expect(calls).toHaveLength(1);
    expect(await ledger.count()).toEqual({ attached: 0, unattached: 1 });
  });

  it('a ledger that fails to settle is logged, and the job still answered handled', async () => {
    const warn = vi.fn();
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      logger: { ...silentLogger, warn },
      ledger: { settle: () => Promise.reject(new Error('ledger down')) },
      onEvent: () => {},
    });
    expect((await receiver.handle(buildSignedRequest({ status: 'success' }))).status).toBe(200);
    expect(warn.mock.calls.some(([, msg]) => /could not settle the job in the ledger/.test(String(msg)))).toBe(true);
  });

  it('refuses a ledger without settle()', () => {
    expect(() => createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, ledger: {} as never })).toThrow(
      /ledger must have a settle method/,
    );
  });
});
