// One tag, one job, through the receiver, on any store: the attacks of a tag copied from one
// delivery onto other jobs, each a delivery signed with the service's real key. Registered by the
// memory and Redis tests (core) and the PostgreSQL tests (packages/postgres), so every store runs
// the same attacks.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createJsonLogger,
  createReceiver,
  type AsyncJobCompletedEvent,
  type IdempotencyStore,
  type ReceiverOptions,
  type ReceiverResponse,
} from '../../src/index.js';
import { RECIPIENT_TAG_KEY, createRecipientTag } from '../../src/recipient/index.js';
import { buildSignedRequest, createTestKeyPair, type TestEventOverrides } from '../../src/testing/index.js';

export const TAG_SECRET = 'receiver-a-secret-0123456789abcdef';
export const TAG_URL = 'https://a.example.com/webhooks/jobs';
const keys = createTestKeyPair();

/** A fresh tag made with the receiver's secret: what the app's client put in one submission. */
export const freshTag = (now = Date.now()): string => createRecipientTag({ secret: TAG_SECRET, webhookReceiver: TAG_URL, now }).value;

/** A delivery of a fresh job carrying `tag` (overrides win, `user_parameters` too), signed by the service's key. */
export function tagged(tag: string, overrides: TestEventOverrides = {}) {
  return buildSignedRequest(
    { job_id: randomUUID(), user_parameters: { [RECIPIENT_TAG_KEY]: tag }, ...overrides },
    { privateKey: keys.privateKey },
  );
}

/** A receiver with `recipientSecret` on `store`, recording the jobs handled and its log lines. */
export function tagReceiver(store: IdempotencyStore, options: Partial<ReceiverOptions> = {}) {
  const handled: AsyncJobCompletedEvent[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const receiver = createReceiver({
    publicKeys: keys.publicKeyPem,
    store,
    recipientSecret: TAG_SECRET,
    logger: createJsonLogger({ write: (line) => void lines.push(JSON.parse(line)) }),
    onEvent: (event) => void handled.push(event),
    ...options,
  });
  return { receiver, handled, lines };
}

/** [status, outcome kind, outcome code]: what the sender sees and what the app's logs and metrics get. */
export const summary = (res: ReceiverResponse): [number, string, string | undefined] => [res.status, res.outcome.kind, res.outcome.code];

export const REUSED: [number, string, string] = [403, 'rejected', 'ERR_RECIPIENT_TAG_REUSED'];

/** Registers the copied-tag attacks on stores made by `makeStore` (one per test, closed after it). */
export function describeTagBinding(name: string, makeStore: () => IdempotencyStore | Promise<IdempotencyStore>): void {
  describe(`one tag, one job: ${name}`, () => {
    const stores: IdempotencyStore[] = [];
    const store = async (): Promise<IdempotencyStore> => {
      const made = await makeStore();
      stores.push(made);
      return made;
    };
    afterEach(async () => {
      await Promise.all(stores.splice(0).map((s) => s.close()));
    });

    it("refuses a tag copied from a delivery onto other jobs (403 body generic, outcome REUSED); the tag's own job passes again", async () => {
      const { receiver, handled } = tagReceiver(await store());
      const tag = freshTag();
      const own = tagged(tag);
      expect(summary(await receiver.handle(own))).toEqual([200, 'handled', undefined]);
      // Another organization's jobs, aimed at this URL with the copied tag.
      for (let i = 0; i < 3; i++) {
        const copy = await receiver.handle(tagged(tag, { output: { paid: true, attempt: i } }));
        expect(summary(copy)).toEqual(REUSED);
        expect(JSON.parse(copy.body)).toEqual({ error: { code: 'ERR_RECIPIENT_REFUSED', message: 'this job is not for this receiver' } });
      }
      // The tag's own job, redelivered (its id in either case): a duplicate, not a refusal.
      expect(summary(await receiver.handle(own))).toEqual([200, 'duplicate', undefined]);
      const upper = tagged(tag, { job_id: own.event.job_id.toUpperCase() });
      expect(summary(await receiver.handle(upper))).toEqual([200, 'duplicate', undefined]);
      expect(handled.map((e) => e.job_id)).toEqual([own.event.job_id]);
      expect(receiver.stats().rejected).toEqual({ ERR_RECIPIENT_TAG_REUSED: 3 });
    });

    it('keeps the binding when the handler fails: the redelivery runs, a copy on another job does not', async () => {
      let failures = 1;
      const ran: string[] = [];
      const { receiver } = tagReceiver(await store(), {
        onEvent: async (event) => {
          ran.push(event.job_id);
          if (failures-- > 0) throw new Error('database down');
        },
      });
      const tag = freshTag();
      const own = tagged(tag);
      expect(summary(await receiver.handle(own))).toEqual([500, 'handler-failed', 'ERR_HANDLER_FAILED']);
      expect(summary(await receiver.handle(tagged(tag)))).toEqual(REUSED);
      expect(summary(await receiver.handle(own))).toEqual([200, 'handled', undefined]);
      expect(ran).toEqual([own.event.job_id, own.event.job_id]);
    });

    it('lets one of ten jobs carrying one tag at once through', async () => {
      const { receiver, handled } = tagReceiver(await store());
      const tag = freshTag();
      const answers = await Promise.all(Array.from({ length: 10 }, () => receiver.handle(tagged(tag))));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => summary(a).join() === REUSED.join())).toHaveLength(9);
      expect(handled).toHaveLength(1);
    });
  });
}
