// The whole loop over real sockets: submit → simulated job → signed webhook to a real receiver
// (core's createReceiver verifying with sender.publicKeyPem) → poll, deliveries, redeliver.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import {
  bearer,
  KEY_IDS,
  pollUntilFinal,
  startReceiver,
  startTestSender,
  submitJob,
  TOKENS,
  waitFor,
  type TestReceiver,
} from './sender-fixtures.js';

let sender: Sender;
let baseUrl: string;
let receiver: TestReceiver;

beforeAll(async () => {
  // No redeliver cooldown: the redeliver tests here follow each other within milliseconds (the
  // cooldown is redeliver-limits.test.ts's).
  ({ sender, baseUrl } = await startTestSender({ redeliverCooldownMs: 0 }));
  receiver = await startReceiver(sender.publicKeyPem);
});
afterAll(async () => {
  await sender.close();
  await receiver.close();
});

const T = TOKENS.uncapped;
const PARAMS = '{"order":1.0,"big":1180591620717411303424,"tiny":1e-07,"name":"Zoë ✓ 😀","nested":{"list":[1.5,-0.0,null,true]}}';

function requestsFor(jobId: string) {
  return receiver.requests.filter((r) => r.rawBody.toString('utf8').includes(jobId));
}

async function deliveries(jobId: string, token: string = T) {
  const res = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}/deliveries`, { headers: bearer(token) });
  return {
    status: res.status,
    json: (await res.json()) as { job_id: string; delivery: string; round: number; attempts: Record<string, unknown>[] },
  };
}

async function redeliver(jobId: string, token: string = T) {
  const res = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}/redeliver`, { method: 'POST', headers: bearer(token) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('success path', () => {
  let jobId: string;

  test('the receiver gets one signed webhook that verifies with sender.publicKeyPem, user_parameters exact', async () => {
    const body = `{"model":"ocr/ocr_async/google","input":{"file":"https://files.example.com/scan.pdf"},"webhook_receiver":"${receiver.url}","user_webhook_parameters":${PARAMS},"show_original_response":true}`;
    const submitted = await submitJob(baseUrl, T, body);
    expect(submitted.status).toBe(201);
    jobId = submitted.json.job_id as string;

    await waitFor(() => requestsFor(jobId).length === 1, 'the webhook');
    const [request] = requestsFor(jobId);
    expect(request!.status).toBe(200); // core's pipeline verified the signature and the payload shape
    const event = request!.event!;
    expect(event).toMatchObject({
      event: 'async_job_completed',
      job_id: jobId,
      status: 'success',
      feature: 'ocr',
      subfeature: 'ocr_async',
      provider: 'google',
      model: null,
    });
    expect(request!.headers['x-service-webhook']).toBe('true');
    expect(request!.headers['x-service-hash-algorithm']).toBe('SHA256');
    expect(request!.headers['x-service-signature']).toMatch(/^[0-9a-f]+$/);
    expect(request!.headers['user-agent']).toMatch(/^jobhook-sender\//);
    // Exact numbers and unicode in the bytes sent (python body style: ", " and ": " separators, \u escapes).
    const raw = request!.rawBody.toString('utf8');
    expect(raw).toContain('"order": 1.0');
    expect(raw).toContain('"big": 1180591620717411303424');
    expect(raw).toContain('"tiny": 1e-07');
    expect(raw).toContain('-0.0');
    expect(event.user_parameters).toMatchObject({ name: 'Zoë ✓ 😀' });
    expect(event.original_response).toMatchObject({ status: 'succeeded', provider: 'google' });
  });

  test('polling shows success with the same output, exact user_parameters, cost and the delivery state', async () => {
    const { json, text } = await pollUntilFinal(baseUrl, T, jobId);
    const event = requestsFor(jobId)[0]!.event!;
    expect(json.status).toBe('success');
    expect(json.output).toEqual(event.output);
    expect(json.finished_at).toBe(event.finished_at);
    expect(json.created_at).toBe(event.created_at);
    expect(json.finished_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
    expect(json.cost).toBe('0.03');
    expect(json.original_response).toEqual(event.original_response);
    expect(text).toContain(`"user_parameters":${PARAMS}`);
    const output = json.output as { raw_text: string; pages: { page: number; text: string }[] };
    expect(output.pages.length).toBeGreaterThan(0);
    expect(output.raw_text).toBe(output.pages.map((p) => p.text).join('\n'));
    await waitFor(async () => {
      const poll = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers: bearer(T) });
      return ((await poll.json()) as { webhook: { delivery: string } }).webhook.delivery === 'delivered';
    }, 'delivery state delivered');
  });

  test('deliveries lists the attempt in snake_case', async () => {
    const { status, json } = await deliveries(jobId);
    expect(status).toBe(200);
    expect(json).toMatchObject({ job_id: jobId, delivery: 'delivered', round: 0 });
    expect(json.attempts).toHaveLength(1);
    const [attempt] = json.attempts;
    expect(Object.keys(attempt!).sort()).toEqual(
      [
        'round',
        'attempt',
        'started_at',
        'duration_ms',
        'url',
        'address',
        'status_code',
        'error',
        'error_message',
        'outcome',
        'next_delay_ms',
        'response_bytes',
        'response_body',
        'key_id',
      ].sort(),
    );
    expect(attempt).toMatchObject({
      round: 0,
      attempt: 1,
      url: receiver.url,
      // An allow-listed loopback receiver: its address is not shown to the submitter.
      address: null,
      status_code: 200,
      error: null,
      outcome: 'delivered',
      next_delay_ms: null,
      // Named on 401 answers only.
      key_id: null,
    });
    // The jobhook receiver's own answer is kept (2xx included), with its length.
    const body = { ok: true, job_id: jobId, duplicate: false };
    expect(attempt).toMatchObject({ response_body: body, response_bytes: JSON.stringify(body).length });
  });

  test('redeliver sends the same job again as round 1 (202), visible in deliveries', async () => {
    const { status, json } = await redeliver(jobId);
    expect(status).toBe(202);
    expect(json).toEqual({ job_id: jobId, round: 1 });
    await waitFor(() => requestsFor(jobId).length === 2, 'the redelivered webhook');
    const second = requestsFor(jobId)[1]!;
    expect(second.status).toBe(200); // verified again (a duplicate for the receiver's dedupe)
    expect(second.rawBody.equals(requestsFor(jobId)[0]!.rawBody)).toBe(true);
    await waitFor(async () => (await deliveries(jobId)).json.attempts.length === 2, 'the second attempt record');
    const listed = (await deliveries(jobId)).json;
    expect(listed.round).toBe(1);
    expect(listed.attempts[1]).toMatchObject({ round: 1, attempt: 1, outcome: 'delivered' });
  });

  test('five concurrent redelivers: each 202 starts its own round and sends one webhook; the rest are 409', async () => {
    // The receiver answers fast, so a round may end before a later call reads the job: more than one
    // 202 is legitimate. What must never happen is two 202s for one round (one webhook for both).
    const answers = await Promise.all(Array.from({ length: 5 }, () => redeliver(jobId)));
    const started = answers.filter((a) => a.status === 202).map((a) => a.json.round as number);
    const refused = answers.filter((a) => a.status !== 202);
    expect(started.length).toBeGreaterThanOrEqual(1);
    expect(started.sort()).toEqual(started.map((_, i) => 2 + i)); // rounds 2, 3, … each once
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.json.detail).toContain('still pending');
    }
    const lastRound = 1 + started.length;
    await waitFor(async () => {
      const listed = (await deliveries(jobId)).json;
      return listed.round === lastRound && listed.delivery === 'delivered';
    }, 'the last round delivered');
    expect((await deliveries(jobId)).json.attempts.map((a) => a.round)).toEqual([0, 1, ...started]);
    expect(requestsFor(jobId)).toHaveLength(2 + started.length);
  });

  test('the same input gives the same output (deterministic provider)', async () => {
    const again = await submitJob(baseUrl, T, { model: 'ocr/ocr_async/google', input: { file: 'https://files.example.com/scan.pdf' } });
    const other = await submitJob(baseUrl, T, { model: 'ocr/ocr_async/google', input: { file: 'https://files.example.com/other.pdf' } });
    const first = await pollUntilFinal(baseUrl, T, jobId);
    expect((await pollUntilFinal(baseUrl, T, again.json.job_id as string)).json.output).toEqual(first.json.output);
    expect((await pollUntilFinal(baseUrl, T, other.json.job_id as string)).json.output).not.toEqual(first.json.output);
  });
});

describe('fail path and simulate', () => {
  test('simulate.outcome fail: webhook and poll carry the same error with error_code', async () => {
    const submitted = await submitJob(baseUrl, T, {
      model: 'audio/speech_to_text_async/deepgram',
      input: { file: 'f', simulate: { outcome: 'fail', error_code: 'provider_timeout' } },
      webhook_receiver: receiver.url,
    });
    const jobId = submitted.json.job_id as string;
    await waitFor(() => requestsFor(jobId).length === 1, 'the fail webhook');
    const event = requestsFor(jobId)[0]!.event!;
    expect(event.status).toBe('fail');
    expect(event.error).toEqual({ message: 'simulated failure of provider deepgram: provider_timeout', error_code: 'provider_timeout' });
    expect(event).not.toHaveProperty('output');
    const { json } = await pollUntilFinal(baseUrl, T, jobId);
    expect(json).toMatchObject({ status: 'fail', error: event.error, cost: '0.05' });
    expect(json).not.toHaveProperty('output');
  });

  test('simulate.output is the output verbatim (1.0 kept); speech to text has its own shape', async () => {
    const verbatim = await submitJob(
      baseUrl,
      T,
      '{"model":"text/moderation/x","input":{"simulate":{"output":{"score":1.0,"labels":["ok"]}}}}',
    );
    const done = await pollUntilFinal(baseUrl, T, verbatim.json.job_id as string);
    expect(done.text).toContain('"output":{"score":1.0,"labels":["ok"]}');

    const stt = await submitJob(baseUrl, T, { model: 'audio/speech_to_text_async/deepgram', input: { file: 'f', language: 'fr' } });
    const output = (await pollUntilFinal(baseUrl, T, stt.json.job_id as string)).json.output as {
      text: string;
      language: string;
      diarization: { total_speakers: number; entries: { segment: string; speaker: number }[] };
    };
    expect(output.language).toBe('fr');
    expect(output.diarization.entries.length).toBeGreaterThan(1);
    expect(output.text).toBe(output.diarization.entries.map((e) => e.segment).join(' '));
    expect(output.diarization.total_speakers).toBe(new Set(output.diarization.entries.map((e) => e.speaker)).size);
  });

  test('simulate.delay_ms keeps the job processing; redeliver is 409 meanwhile', async () => {
    const submitted = await submitJob(baseUrl, T, {
      model: 'ocr/ocr_async/google',
      input: { simulate: { delay_ms: 60_000 } },
      webhook_receiver: receiver.url,
    });
    const jobId = submitted.json.job_id as string;
    const poll = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers: bearer(T) });
    expect(await poll.json()).toMatchObject({ status: 'processing', finished_at: null, webhook: { delivery: 'pending' } });
    const refused = await redeliver(jobId);
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toContain('still processing');
  });

  test('redeliver of a job without webhook_receiver is 409', async () => {
    const submitted = await submitJob(baseUrl, T, { model: 'ocr/ocr_async/google', input: {} });
    const jobId = submitted.json.job_id as string;
    await pollUntilFinal(baseUrl, T, jobId);
    const refused = await redeliver(jobId);
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual({ detail: 'the job has no webhook_receiver' });
    expect((await deliveries(jobId)).json).toEqual({ job_id: jobId, delivery: null, round: 0, attempts: [] });
  });
});

describe('retries', () => {
  test('5xx is retried with backoff until a 2xx; each attempt is listed', async () => {
    const { sender: s2, baseUrl: url2 } = await startTestSender();
    const flaky = await startReceiver(s2.publicKeyPem, (i) => (i < 2 ? 503 : undefined));
    try {
      const submitted = await submitJob(url2, T, { model: 'ocr/ocr_async/google', input: {}, webhook_receiver: flaky.url });
      const jobId = submitted.json.job_id as string;
      await waitFor(() => flaky.requests.length === 3, 'three attempts');
      await waitFor(async () => {
        const res = await fetch(`${url2}/v3/universal-ai/async/${jobId}/deliveries`, { headers: bearer(T) });
        return ((await res.json()) as { delivery: string }).delivery === 'delivered';
      }, 'delivered');
      const res = await fetch(`${url2}/v3/universal-ai/async/${jobId}/deliveries`, { headers: bearer(T) });
      const { attempts } = (await res.json()) as {
        attempts: { attempt: number; outcome: string; status_code: number; next_delay_ms: number | null }[];
      };
      expect(attempts.map((a) => [a.attempt, a.outcome, a.status_code])).toEqual([
        [1, 'retry', 503],
        [2, 'retry', 503],
        [3, 'delivered', 200],
      ]);
      // Exponential with jitter, base 20 ms, cap 100 ms: [10, 20] then [20, 40].
      expect(attempts[0]!.next_delay_ms).toBeGreaterThanOrEqual(10);
      expect(attempts[0]!.next_delay_ms).toBeLessThanOrEqual(20);
      expect(attempts[1]!.next_delay_ms).toBeGreaterThanOrEqual(20);
      expect(attempts[1]!.next_delay_ms).toBeLessThanOrEqual(40);
    } finally {
      await s2.close();
      await flaky.close();
    }
  });

  test('4xx is not retried: delivery rejected after one attempt', async () => {
    const { sender: s3, baseUrl: url3 } = await startTestSender();
    const refusing = await startReceiver(s3.publicKeyPem, () => 410);
    try {
      const submitted = await submitJob(url3, T, { model: 'ocr/ocr_async/google', input: {}, webhook_receiver: refusing.url });
      const jobId = submitted.json.job_id as string;
      await waitFor(async () => {
        const res = await fetch(`${url3}/v3/universal-ai/async/${jobId}`, { headers: bearer(T) });
        return ((await res.json()) as { webhook: { delivery: string } }).webhook.delivery === 'rejected';
      }, 'rejected');
      // No retry scheduled, as the delivery log says (rather than sleeping past every retry delay
      // and hoping a retry would have come by then): one attempt, rejected, no next delay.
      const log = await fetch(`${url3}/v3/universal-ai/async/${jobId}/deliveries`, { headers: bearer(T) });
      const { attempts } = (await log.json()) as {
        attempts: { attempt: number; outcome: string; status_code: number; next_delay_ms: number | null }[];
      };
      expect(attempts.map((a) => [a.attempt, a.outcome, a.status_code, a.next_delay_ms])).toEqual([[1, 'rejected', 410, null]]);
      expect(refusing.requests).toHaveLength(1);
    } finally {
      await s3.close();
      await refusing.close();
    }
  });
});

describe('organizations and credits', () => {
  test("another organization's job is 404 on poll, deliveries and redeliver", async () => {
    const submitted = await submitJob(baseUrl, T, { model: 'ocr/ocr_async/google', input: {}, webhook_receiver: receiver.url });
    const jobId = submitted.json.job_id as string;
    await pollUntilFinal(baseUrl, T, jobId);
    const foreign = TOKENS.globexInference;
    const poll = await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers: bearer(foreign) });
    expect(poll.status).toBe(404);
    expect(await poll.json()).toEqual({ detail: 'job not found' });
    expect((await deliveries(jobId, foreign)).status).toBe(404);
    expect((await redeliver(jobId, foreign)).status).toBe(404);
    // Another key of the same organization sees it.
    expect((await fetch(`${baseUrl}/v3/universal-ai/async/${jobId}`, { headers: bearer(TOKENS.inference) })).status).toBe(200);
  });

  test('credits decrease per job; 402 {detail} when exhausted; the balance never goes negative', async () => {
    // The poor key holds 0.05; an OCR job costs 0.03.
    const { sender: s4, baseUrl: url4 } = await startTestSender();
    try {
      expect((await submitJob(url4, TOKENS.poor, { model: 'ocr/ocr_async/google', input: {} })).status).toBe(201);
      const refused = await submitJob(url4, TOKENS.poor, { model: 'ocr/ocr_async/google', input: {} });
      expect(refused.status).toBe(402);
      expect(Object.keys(refused.json)).toEqual(['detail']);
      expect(refused.json.detail).toContain('insufficient credits');
      // A cheaper job (text: 0.01) still fits.
      expect((await submitJob(url4, TOKENS.poor, { model: 'text/summarize/openai', input: {} })).status).toBe(201);
      const key = await fetch(`${url4}/v3/manage/keys/${KEY_IDS.poor}/`, { headers: bearer(TOKENS.management) });
      expect(((await key.json()) as { balance: number }).balance).toBe(0.01);
      // Uncapped keys are only counted.
      await submitJob(url4, TOKENS.uncapped, { model: 'ocr/ocr_async/google', input: {} });
      expect((await s4.usage()).find((u) => u.keyId === KEY_IDS.uncapped)).toMatchObject({ requests: 1, spent: 0.03, balance: null });
    } finally {
      await s4.close();
    }
  });

  test('SSRF: a loopback receiver is refused at submission without an allowlist', async () => {
    const { sender: strict, baseUrl: strictUrl } = await startTestSender({ receiverAllowlist: [], allowInsecureReceivers: false });
    try {
      for (const url of ['https://127.0.0.1/hooks', 'https://[::1]/hooks', 'https://localhost/hooks', receiver.url]) {
        const refused = await submitJob(strictUrl, T, { model: 'ocr/ocr_async/google', input: {}, webhook_receiver: url });
        expect(refused.status, url).toBe(400);
        expect(refused.json.detail).toMatch(/^webhook_receiver refused: /);
      }
    } finally {
      await strict.close();
    }
  });
});
