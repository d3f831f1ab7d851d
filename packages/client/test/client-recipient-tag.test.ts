/**
 * createClient({ recipientSecret }): every submission with a webhook_receiver carries a recipient tag
 * in user_webhook_parameters, as sent over HTTP to a real (fake) service that records the bodies.
 */
import { JobhookError } from '@jobhook/core';
import { rawJson } from '@jobhook/core/json';
import { createReceiver, silentLogger } from '@jobhook/core';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECIPIENT_TAG_KEY, createClient, createRecipientTag, withRecipientTag } from '../src/index.js';
import { GOOD_KEY, startFakeService, type FakeService } from './helpers/fake-service.js';

const SECRET = 'client-side-secret-0123456789abcdef';
const HOOK = 'https://a.example.com/webhooks/jobs';
const TAG = /^v1\.\d+\.[\w-]{22}\.[\w-]{22}\.[\w-]{43}$/;

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterAll(() => service.close());

/** The body text of the last submission the service received. */
const lastSubmission = (): string => service.requests.filter((r) => r.method === 'POST').at(-1)!.body;

describe('createClient({ recipientSecret })', () => {
  const client = () => createClient({ baseUrl: service.url, apiKey: GOOD_KEY, recipientSecret: SECRET });

  it('adds a fresh tag to every submission with a webhook_receiver, and none without one', async () => {
    await client().submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'x' }, webhook_receiver: HOOK });
    const first = JSON.parse(lastSubmission()) as { user_webhook_parameters: Record<string, string> };
    expect(Object.keys(first.user_webhook_parameters)).toEqual([RECIPIENT_TAG_KEY]);
    expect(first.user_webhook_parameters[RECIPIENT_TAG_KEY]).toMatch(TAG);
    await client().submitJob({
      model: 'ocr/ocr_async/amazon',
      input: { file: 'x' },
      webhook_receiver: HOOK,
      user_webhook_parameters: { order: 7 },
    });
    const second = JSON.parse(lastSubmission()) as { user_webhook_parameters: Record<string, unknown> };
    expect(second.user_webhook_parameters).toEqual({ order: 7, [RECIPIENT_TAG_KEY]: expect.stringMatching(TAG) });
    expect(second.user_webhook_parameters[RECIPIENT_TAG_KEY]).not.toBe(first.user_webhook_parameters[RECIPIENT_TAG_KEY]);
    await client().submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'x' }, user_webhook_parameters: { order: 8 } });
    expect(JSON.parse(lastSubmission())).toMatchObject({ user_webhook_parameters: { order: 8 } });
    expect(lastSubmission()).not.toContain(RECIPIENT_TAG_KEY);
  });

  it('keeps a RawJson’s bytes: the member is inserted before its closing brace', async () => {
    const text = '{"amount": 1.0, "big": 123456789012345678901234567890}';
    await client().submitJob({ model: 'ocr/ocr_async/amazon', input: {}, webhook_receiver: HOOK, user_webhook_parameters: rawJson(text) });
    const sent = lastSubmission();
    expect(sent).toMatch(
      new RegExp(
        `"user_webhook_parameters":\\{"amount": 1\\.0, "big": 123456789012345678901234567890,"${RECIPIENT_TAG_KEY}":"v1\\.[^"]+"\\}`,
      ),
    );
  });

  it('refuses parameters that already hold the reserved key, before sending anything: ERR_RECIPIENT_KEY_TAKEN', async () => {
    const before = service.requests.length;
    for (const params of [{ [RECIPIENT_TAG_KEY]: 'mine' }, rawJson(`{"a": 1, "${RECIPIENT_TAG_KEY}": "mine"}`)]) {
      const err = await client()
        .submitJob({ model: 'ocr/ocr_async/amazon', input: {}, webhook_receiver: HOOK, user_webhook_parameters: params })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(JobhookError);
      expect(err).toMatchObject({ code: 'ERR_RECIPIENT_KEY_TAKEN', message: expect.stringContaining('submitJob') });
    }
    expect(service.requests.length).toBe(before);
  });

  it('refuses a short secret at construction: ERR_OPTION_INVALID naming recipientSecret', () => {
    expect(() => createClient({ baseUrl: service.url, apiKey: GOOD_KEY, recipientSecret: 'short' })).toThrow(/recipientSecret/);
  });

  it("makes tags the receiver with the same secret accepts, and another receiver's secret refuses", async () => {
    await client().submitJob({ model: 'ocr/ocr_async/amazon', input: {}, webhook_receiver: HOOK, user_webhook_parameters: { n: 1 } });
    const params = (JSON.parse(lastSubmission()) as { user_webhook_parameters: Record<string, unknown> }).user_webhook_parameters;
    const keys = createTestKeyPair();
    const delivery = buildSignedRequest({ user_parameters: params }, { privateKey: keys.privateKey });
    const handled: unknown[] = [];
    const ours = createReceiver({
      publicKeys: keys.publicKeyPem,
      logger: silentLogger,
      recipientSecret: SECRET,
      recipientUrl: HOOK,
      onEvent: (e) => void handled.push(e.user_parameters),
    });
    expect((await ours.handle(delivery)).status).toBe(200);
    expect(handled).toEqual([{ n: 1 }]);
    const theirs = createReceiver({
      publicKeys: keys.publicKeyPem,
      logger: silentLogger,
      recipientSecret: 'someone-else-0123456789abcdef',
      onEvent: () => {},
    });
    expect((await theirs.handle(delivery)).status).toBe(403);
  });
});

describe('createRecipientTag and withRecipientTag, for teams with their own HTTP code', () => {
  it('give the member to merge into user_webhook_parameters', () => {
    const tag = createRecipientTag({
      secret: SECRET,
      webhookReceiver: HOOK,
      now: 1_700_000_000_123,
      randomBytes: (n) => new Uint8Array(n),
    });
    expect(tag).toMatchObject({ key: RECIPIENT_TAG_KEY, issuedAt: 1_700_000_000, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' });
    expect(tag.value).toMatch(TAG);
    expect(withRecipientTag({ order: 1 }, tag)).toEqual({ order: 1, [RECIPIENT_TAG_KEY]: tag.value });
  });
});
