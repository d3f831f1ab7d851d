// createSender: option checks at construction, dev accounts, the generated key, listen/close, logging.
import { createPublicKey, createPrivateKey } from 'node:crypto';
import { JobhookError, type Logger } from '@jobhook/core';
import { createTestKeyPair } from '@jobhook/core/testing';
import { describe, expect, test } from 'vitest';
import { createSender, type SenderOptions } from '../../src/index.js';
import { accountsFixture, bearer, startReceiver, submitJob, TOKENS, waitFor } from './sender-fixtures.js';

const key = createTestKeyPair().privateKey;

async function rejection(options: unknown): Promise<JobhookError> {
  try {
    const sender = await createSender(options as SenderOptions);
    await sender.close();
  } catch (err) {
    if (err instanceof JobhookError) return err;
    throw err;
  }
  throw new Error('createSender accepted the options');
}

describe('options are checked at construction', () => {
  const rows: [string, Record<string, unknown>, string][] = [
    ['an unknown option', { retryBase: 10 }, 'unknown option "retryBase"'],
    ['attemptTimeoutMs 0', { attemptTimeoutMs: 0 }, 'attemptTimeoutMs must be an integer from 1 to 600000, got 0'],
    ['attemptTimeoutMs a float', { attemptTimeoutMs: 1.5 }, 'attemptTimeoutMs must be an integer'],
    ['retryBaseMs a string', { retryBaseMs: '20' }, 'retryBaseMs must be an integer'],
    ['maxRetries negative', { maxRetries: -1 }, 'maxRetries must be an integer from 0 to 100'],
    [
      'maxRetryDelayMs below retryBaseMs',
      { retryBaseMs: 500, maxRetryDelayMs: 100 },
      'maxRetryDelayMs (100) must be at least retryBaseMs (500)',
    ],
    ['deliveryConcurrency 0', { deliveryConcurrency: 0 }, 'deliveryConcurrency must be an integer'],
    ['jobDelayMs negative', { jobDelayMs: -5 }, 'jobDelayMs must be an integer from 0 to 600000'],
    ['queueLockMs too short', { queueLockMs: 99 }, 'queueLockMs must be an integer from 100 to 600000'],
    // Every option that becomes a timer is bounded far below 2^31-1 ms (setTimeout fires at once beyond it).
    ['attemptTimeoutMs 3e9', { attemptTimeoutMs: 3e9 }, 'attemptTimeoutMs must be an integer from 1 to 600000, got 3000000000'],
    ['retryBaseMs 3e9', { retryBaseMs: 3e9 }, 'retryBaseMs must be an integer from 1 to 3600000, got 3000000000'],
    ['maxRetryDelayMs 3e9', { maxRetryDelayMs: 3e9 }, 'maxRetryDelayMs must be an integer from 1 to 3600000, got 3000000000'],
    ['jobDelayMs 3e9', { jobDelayMs: 3e9 }, 'jobDelayMs must be an integer from 0 to 600000, got 3000000000'],
    ['queueLockMs 3e9', { queueLockMs: 3e9 }, 'queueLockMs must be an integer from 100 to 600000, got 3000000000'],
    ['redeliverCooldownMs 3e9', { redeliverCooldownMs: 3e9 }, 'redeliverCooldownMs must be an integer from 0 to 86400000, got 3000000000'],
    ['requestTimeoutMs 3e9', { requestTimeoutMs: 3e9 }, 'requestTimeoutMs must be an integer from 100 to 600000, got 3000000000'],
    ['requestTimeoutMs 0 (no timeout)', { requestTimeoutMs: 0 }, 'requestTimeoutMs must be an integer from 100 to 600000, got 0'],
    [
      'headersTimeoutMs above requestTimeoutMs',
      { requestTimeoutMs: 1000, headersTimeoutMs: 2000 },
      'headersTimeoutMs must be an integer from 100 to 1000, got 2000',
    ],
    ['keepAliveTimeoutMs 3e9', { keepAliveTimeoutMs: 3e9 }, 'keepAliveTimeoutMs must be an integer from 1 to 600000, got 3000000000'],
    ['connectionTimeoutMs 3e9', { connectionTimeoutMs: 3e9 }, 'connectionTimeoutMs must be an integer from 100 to 600000, got 3000000000'],
    ['bodyStyle unknown', { bodyStyle: 'pretty' }, 'bodyStyle must be "python", "canonical" or "compact"'],
    ['headerNames with a bad name', { headerNames: { signature: 'X Sig' } }, 'headerNames.signature must be an HTTP header name'],
    ['headerNames with an unknown member', { headerNames: { sig: 'X-Sig' } }, 'headerNames.sig is not known'],
    ['userAgent with CRLF', { userAgent: 'a\r\nX-Evil: 1' }, 'userAgent must be a non-empty string without control characters'],
    ['allowInsecureReceivers a string', { allowInsecureReceivers: 'yes' }, 'allowInsecureReceivers must be a boolean'],
    ['receiverAllowlist not CIDRs', { receiverAllowlist: ['localhost'] }, 'receiverAllowlist[0] must be a CIDR'],
    ['receiverAllowlist not an array', { receiverAllowlist: '127.0.0.0/8' }, 'receiverAllowlist must be an array'],
    ['resolveHost not a function', { resolveHost: {} }, 'resolveHost must be a function'],
    ['random not a function', { random: 0.5 }, 'random must be a function'],
    ['now not a function', { now: Date.now() }, 'now must be a function'],
    ['logger without methods', { logger: console.log }, 'logger must have debug, info, warn and error methods'],
    ['redisUrl not redis://', { redisUrl: 'http://localhost:6379' }, 'redisUrl must be a redis:// or rediss:// URL'],
    ['redisPrefix with a colon', { redisPrefix: 'a:b' }, 'redisPrefix must be 1-64 characters'],
    ['apiKeys not strings', { apiKeys: [1] }, 'apiKeys must be an array of token strings'],
    ['an api key too short', { apiKeys: ['short'] }, 'apiKeys[0] must have 16 to 512 characters'],
    [
      'an api key equal to a configured token',
      { accounts: accountsFixture(), apiKeys: [TOKENS.inference] },
      'apiKeys[0] is already the token of another key',
    ],
    [
      'accounts breaking a rule',
      { accounts: { organizations: [] } },
      'createSender: accounts: organizations must hold at least one organization',
    ],
  ];

  test.each(rows)('%s → ERR_OPTION_INVALID', async (_name, options, message) => {
    const err = await rejection({ privateKey: key, ...options });
    expect(err.code).toBe('ERR_OPTION_INVALID');
    expect(err.message).toContain(message);
    expect(err.message).toMatch(/^createSender: /);
  });

  test('an unusable private key → ERR_KEY_INVALID naming the option', async () => {
    const err = await rejection({ privateKey: 'not a pem' });
    expect(err.code).toBe('ERR_KEY_INVALID');
    expect(err.message).toMatch(/^createSender: privateKey: /);
  });

  test('an unreachable Redis fails at construction', async () => {
    const err = await rejection({ privateKey: key, redisUrl: 'redis://127.0.0.1:1' });
    expect(err.code).toBe('ERR_STORE_UNAVAILABLE');
  });
});

describe('the running sender', () => {
  test('without accounts: dev keys that work, an RSA-3072 key generated, SPKI PEM published', async () => {
    const sender = await createSender();
    try {
      expect(sender.devKeys).not.toBeNull();
      const { inference, management } = sender.devKeys!;
      expect(inference).toMatch(/^jh_inf_[A-Za-z0-9]{32}$/);
      expect(management).toMatch(/^jh_mgmt_[A-Za-z0-9]{32}$/);
      expect(sender.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
      expect(createPublicKey(sender.publicKeyPem).asymmetricKeyDetails?.modulusLength).toBe(3072);
      const baseUrl = await sender.listen({ port: 0 });
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const job = await submitJob(baseUrl, inference, { model: 'ocr/ocr_async/google', input: {} });
      expect(job.status).toBe(201);
      const [inf] = await sender.usage();
      const keyRes = await fetch(`${baseUrl}/v3/manage/keys/${inf!.keyId}/`, { headers: bearer(management) });
      expect(await keyRes.json()).toMatchObject({
        name: 'dev inference key',
        member: 'dev@jobhook.test',
        balance: 999.97,
        active_balance: true,
        revoked: false,
      });
    } finally {
      await sender.close();
    }
  });

  test('with accounts: devKeys is null; apiKeys are usable inference keys of the first organization', async () => {
    const extra = 'cli_given_token_0123456789';
    const sender = await createSender({ privateKey: key, accounts: accountsFixture(), apiKeys: [extra] });
    try {
      expect(sender.devKeys).toBeNull();
      const baseUrl = await sender.listen({ port: 0 });
      expect((await submitJob(baseUrl, extra, { model: 'ocr/ocr_async/google', input: {} })).status).toBe(201);
      expect((await sender.usage()).at(-1)).toMatchObject({
        organizationId: 'acme',
        requests: 1,
        balance: 999.97,
        masked: 'cli_given_…6789',
      });
    } finally {
      await sender.close();
    }
  });

  test('random makes dev tokens reproducible; the given key is the one published', async () => {
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const a = await createSender({ privateKey: key, random });
    seed = 1;
    const b = await createSender({ privateKey: key, random });
    try {
      expect(a.devKeys).toEqual(b.devKeys);
      expect(a.publicKeyPem).toBe(
        createPublicKey(createPrivateKey(createTestKeyPair().privateKeyPem)).export({ type: 'spki', format: 'pem' }),
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('close() is idempotent and stops the server', async () => {
    const sender = await createSender({ privateKey: key });
    const baseUrl = await sender.listen({ port: 0 });
    await Promise.all([sender.close(), sender.close()]);
    await sender.close();
    await expect(fetch(`${baseUrl}/v3/universal-ai/async`)).rejects.toThrow();
  });

  test('listen rejects a bad port', async () => {
    const sender = await createSender({ privateKey: key });
    try {
      await expect(sender.listen({ port: 70000 })).rejects.toThrow('listen port must be an integer from 0 to 65535');
    } finally {
      await sender.close();
    }
  });

  test('logs job finished and each attempt outcome to the given logger', async () => {
    const lines: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
    const log = (level: string) => (obj: object, msg?: string) => lines.push({ level, obj: obj as Record<string, unknown>, msg });
    const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    const sender = await createSender({
      privateKey: key,
      accounts: accountsFixture(),
      logger,
      jobDelayMs: 1,
      retryBaseMs: 10,
      maxRetryDelayMs: 20,
      maxRetries: 1,
      allowInsecureReceivers: true,
      receiverAllowlist: ['127.0.0.0/8'],
    });
    const failing = await startReceiver(sender.publicKeyPem, () => 500);
    try {
      const baseUrl = await sender.listen({ port: 0 });
      const { json } = await submitJob(baseUrl, TOKENS.inference, {
        model: 'ocr/ocr_async/google',
        input: {},
        webhook_receiver: failing.url,
      });
      await waitFor(() => lines.some((l) => l.msg === 'webhook failed; retries exhausted'), 'the final failure log');
      // Debug lines (the deliverer's own included) are left out: info and warn tell the story.
      const jobLines = lines.filter((l) => l.obj.jobId === json.job_id && l.level !== 'debug');
      expect(jobLines.map((l) => [l.level, l.msg])).toEqual([
        ['info', 'job finished'],
        ['warn', 'webhook attempt failed; retrying'],
        ['warn', 'webhook failed; retries exhausted'],
      ]);
      expect(jobLines[0]!.obj).toMatchObject({ status: 'success', feature: 'ocr', provider: 'google', webhook: true });
      expect(jobLines[1]!.obj).toMatchObject({ attempt: 1, statusCode: 500 });
      expect(jobLines[2]!.obj).toMatchObject({ attempt: 2, statusCode: 500 });
    } finally {
      await sender.close();
      await failing.close();
    }
  });
});
