/**
 * Real POSTs to a local receiver whose handler hands the raw body and the signature header to
 * python3, which verifies as a Python client of the service does:
 * sha256(json.dumps(json.loads(body), sort_keys=True, indent=2, ensure_ascii=False)) then RSA
 * PKCS#1 v1.5 / SHA-256 over that hex digest (cryptography, or openssl). The receiver answers 200
 * when Python verified and 401 otherwise, so the delivery outcome is Python's verdict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BodyStyle } from '@jobhook/core/sign';
import { createTestKeyPair } from '@jobhook/core/testing';
import { createDeliverer, createRetryPolicy, createSsrfGuard } from '@jobhook/delivery';
import { buildWebhookPayload } from '../../src/jobs/webhook-payload.js';
import { createMemoryJobStore } from '../../src/jobs/memory-job-store.js';
import { seedJob } from '../helpers/delivery-jobs.js';
import { startPythonVerifier, type PythonVerdict, type PythonVerifier } from '../helpers/delivery-python.js';
import { startDeliveryReceiver, type DeliveryReceiver } from '../../../delivery/test/helpers/delivery-receiver.js';

const keys = createTestKeyPair();
const jobs = createMemoryJobStore();
const verdicts = new Map<string, PythonVerdict>();
let python: PythonVerifier;
let receiver: DeliveryReceiver;

const PARAMS =
  '{"f":1.0,"tiny":1e-7,"huge":1.5e300,"i70":1180591620717411303424,"neg":-18446744073709551616,"s":"é 😀 中文","nested":{"z":[1.0,2.50,-0.0]}}';
// What Python's json.loads/json.dumps(sort_keys=True, ensure_ascii=False) makes of PARAMS.
const PARAMS_IN_PYTHON =
  '{"f": 1.0, "huge": 1.5e+300, "i70": 1180591620717411303424, "neg": -18446744073709551616, "nested": {"z": [1.0, 2.5, -0.0]}, "s": "é 😀 中文", "tiny": 1e-07}';

beforeAll(async () => {
  python = await startPythonVerifier(keys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  receiver = await startDeliveryReceiver((req, res) => {
    // The path names the case: /<id>/<via>
    const [, id = '', via = 'auto'] = req.path.split('/');
    const tamper = via === 'tampered';
    const body = tamper ? Buffer.from(req.body.toString('utf8').replace('Hello', 'Hellp'), 'utf8') : req.body;
    void python.verify(id, body, String(req.headers['x-service-signature']), via === 'openssl' ? 'openssl' : 'auto').then((verdict) => {
      verdicts.set(id, verdict);
      res.writeHead(verdict.ok ? 200 : 401).end();
    });
  });
});

afterAll(async () => {
  await receiver.close();
  await python.close();
});

async function deliver(id: string, bodyStyle: BodyStyle, job: Parameters<typeof seedJob>[1], via = 'auto') {
  const deliverer = createDeliverer({
    jobs,
    payload: buildWebhookPayload,
    privateKey: keys.privateKey,
    policy: createRetryPolicy({ maxRetries: 0 }),
    guard: createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.1/32'] }),
    attemptTimeoutMs: 5000,
    bodyStyle,
  });
  const seeded = await seedJob(jobs, { ...job, webhookReceiver: receiver.url(`/${id}/${via}`) });
  const record = await deliverer.attempt({ jobId: seeded.jobId, round: 0, attempt: 1 });
  const body = receiver.requests.find((r) => r.path === `/${id}/${via}`)?.body ?? Buffer.alloc(0);
  return { record, verdict: verdicts.get(id), body };
}

const SUCCESS = {
  outputJson: '{"raw_text":"Hello, wörld 👋 你好","confidence":1.0,"pages":2}',
  userParametersJson: PARAMS,
  showOriginalResponse: true,
};
const FAIL = {
  status: 'fail' as const,
  outputJson: null,
  error: { message: 'Provider error: café ☕ 失败', error_code: 'provider_error' },
  userParametersJson: PARAMS,
};

describe('Python verifies what the sender signs (python3, one process)', () => {
  it('runs python3 with the cryptography module (else the openssl fallback)', () => {
    expect(python.meta.python).toMatch(/^3\./);
  });

  describe.each(['python', 'canonical', 'compact'] as const)('body style %s', (style) => {
    it.each([
      ['success', SUCCESS],
      ['fail', FAIL],
    ] as const)('%s payload with unicode, floats and big integers: verified, user_parameters exact', async (kind, job) => {
      const { record, verdict, body } = await deliver(`${style}-${kind}`, style, job);
      expect(verdict?.error).toBeUndefined();
      expect(verdict).toMatchObject({ ok: true, via: python.meta.cryptography === null ? 'openssl' : 'cryptography' });
      expect(record).toMatchObject({ outcome: 'delivered', statusCode: 200 });
      expect(verdict?.user_parameters).toBe(PARAMS_IN_PYTHON);
      // The body really has the style's layout.
      expect(verdict?.body_is_canonical).toBe(style === 'canonical');
      const text = body.toString('utf8');
      if (style === 'python') {
        expect(text).toMatch(/^\{"event": "async_job_completed", "job_id": /);
        expect(text).toContain('\\u00e9');
      }
      if (style === 'compact') {
        expect(text).toMatch(/^\{"event":"async_job_completed","job_id":/);
        expect(text).toContain('é 😀 中文');
      }
      if (style === 'canonical') expect(text).toMatch(/^\{\n {2}"created_at": /);
    });
  });

  it('verifies with the openssl fallback too', async () => {
    const { record, verdict } = await deliver('openssl-success', 'python', SUCCESS, 'openssl');
    expect(verdict).toMatchObject({ ok: true, via: 'openssl' });
    expect(record.outcome).toBe('delivered');
  });

  it('a tampered body does not verify in Python (receiver answers 401: rejected)', async () => {
    const { record, verdict } = await deliver('tampered-success', 'python', SUCCESS, 'tampered');
    expect(verdict).toMatchObject({ ok: false });
    expect(record).toMatchObject({ outcome: 'rejected', statusCode: 401 });
  });
});
