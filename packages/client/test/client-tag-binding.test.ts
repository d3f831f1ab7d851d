/**
 * One tag, one job, from the submitting side: a webhook that reaches the receiver before the
 * client has written the job id to the ledger (`attach`) binds the tag's nonce to its job and is
 * handled; the later poll of the same job passes as a duplicate; the tag copied onto another job is
 * refused. The binding is the store's, keyed by the nonce alone: it needs no ledger entry.
 */
import { createMemoryStore, createReceiver, createJsonLogger, type ReceiverResponse } from '@jobhook/core';
import { createMemoryLedger } from '@jobhook/core/ledger';
import { buildSignedRequest, createTestKeyPair } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECIPIENT_TAG_KEY, createClient } from '../src/index.js';
import { GOOD_KEY, startFakeService, type FakeService } from './helpers/fake-service.js';

const SECRET = 'client-side-secret-0123456789abcdef';
const HOOK = 'https://a.example.com/webhooks/jobs';
const keys = createTestKeyPair();

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterAll(() => service.close());

describe('a webhook that arrives before the ledger has the job id', () => {
  it('is handled, the poll of the same job is a duplicate, and its tag on another job is refused', async () => {
    const ledger = createMemoryLedger();
    const lines: Array<Record<string, unknown>> = [];
    const handled: string[] = [];
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store: createMemoryStore(),
      ledger,
      recipientSecret: SECRET,
      recipientUrl: HOOK,
      logger: createJsonLogger({ write: (line) => void lines.push(JSON.parse(line)) }),
      onEvent: (event) => void handled.push(event.job_id),
    });
    let early: ReceiverResponse | undefined;
    let countsAtWebhook: unknown;
    let params: Record<string, unknown> = {};
    // The service answers the submission, and its webhook is delivered before the client reads the answer.
    const racingFetch: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      if (init?.method === 'POST' && answer.ok) {
        const { job_id } = (await answer.clone().json()) as { job_id: string };
        params = (JSON.parse(String(init.body)) as { user_webhook_parameters: Record<string, unknown> }).user_webhook_parameters;
        countsAtWebhook = await ledger.count();
        const delivery = buildSignedRequest({ job_id, user_parameters: params }, { privateKey: keys.privateKey });
        early = await receiver.handle(delivery);
      }
      return answer;
    };
    const client = createClient({ baseUrl: service.url, apiKey: GOOD_KEY, recipientSecret: SECRET, ledger, fetch: racingFetch });
    const { job_id: jobId } = await client.submitJob({ model: 'ocr/ocr_async/amazon', input: { file: 'x' }, webhook_receiver: HOOK });

    expect(countsAtWebhook).toEqual({ attached: 0, unattached: 1 }); // the race: no job id in the ledger yet
    expect([early?.status, early?.outcome.kind]).toEqual([200, 'handled']);
    expect(handled).toEqual([jobId]);
    // attach came after the webhook's settle: the reconciler polls the job once, and finds it handled.
    expect(await ledger.count()).toEqual({ attached: 1, unattached: 0 });
    const poll = { job_id: jobId, status: 'success', output: { text: 'x' }, user_parameters: params };
    expect(await receiver.handlePolled(poll)).toEqual({ kind: 'duplicate', jobId });

    // The tag, copied from this job's delivery onto another organization's job.
    const copy = buildSignedRequest(
      { user_parameters: { [RECIPIENT_TAG_KEY]: params[RECIPIENT_TAG_KEY] } },
      { privateKey: keys.privateKey },
    );
    const refused = await receiver.handle(copy);
    expect([refused.status, refused.outcome.code, JSON.parse(refused.body).error.code]).toEqual([
      403,
      'ERR_RECIPIENT_TAG_REUSED',
      'ERR_RECIPIENT_REFUSED',
    ]);
    expect(handled).toEqual([jobId]);
    // Only the copy is logged as a reuse: neither the early webhook nor the poll.
    expect(lines.filter((line) => line['code'] === 'ERR_RECIPIENT_TAG_REUSED').map((line) => line['jobId'])).toEqual([copy.event.job_id]);
  });
});
