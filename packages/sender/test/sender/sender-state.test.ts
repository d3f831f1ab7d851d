// createSender's stateDir and publicKeyFile, and its two default organizations: what a restart keeps,
// two senders starting at once on one empty folder, a folder that holds something unusable.
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKeyRing } from '@jobhook/core';
import { createTestKeyPair } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createSender } from '../../src/index.js';
import { bearer, submitJob } from './sender-fixtures.js';

let tmp: string;
let n = 0;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-sender-state-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});
const freshDir = (): string => join(tmp, `state-${++n}`);

describe('stateDir', () => {
  test('a second sender on the folder signs with the same key and takes the same dev keys', async () => {
    const stateDir = freshDir();
    const first = await createSender({ stateDir });
    await first.close();
    const second = await createSender({ stateDir });
    try {
      expect(second.keyId).toBe(first.keyId);
      expect(second.publicKeyPem).toBe(first.publicKeyPem);
      expect(second.devKeys).toEqual(first.devKeys);
      const baseUrl = await second.listen({ port: 0 });
      expect((await submitJob(baseUrl, first.devKeys!.inference, { model: 'ocr/ocr_async/google', input: {} })).status).toBe(201);
    } finally {
      await second.close();
    }
  });

  test('two senders starting at once on an empty folder agree on one key and one set of accounts', async () => {
    const stateDir = freshDir();
    const [a, b] = await Promise.all([createSender({ stateDir }), createSender({ stateDir })]);
    try {
      expect(a.keyId).toBe(b.keyId);
      expect(a.devKeys).toEqual(b.devKeys);
      // ...and it is the key on disk, which the next start reads.
      expect(createKeyRing(createPublicKey(readFileSync(join(stateDir, 'signing-key.pem')))).keys[0]!.id).toBe(a.keyId);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('privateKey and accounts given: the folder is not created', async () => {
    const stateDir = freshDir();
    const sender = await createSender({ stateDir, privateKey: createTestKeyPair().privateKey, accounts: { organizations: [] } }).catch(
      (err: unknown) => err,
    );
    // Empty accounts are refused; what matters here is that nothing was written before.
    expect(sender).toMatchObject({ code: 'ERR_OPTION_INVALID' });
    expect(() => readFileSync(join(stateDir, '.gitignore'))).toThrow(/ENOENT/);
  });

  test('an accounts file that breaks a rule: refused, naming the file and the field', async () => {
    const stateDir = freshDir();
    const sender = await createSender({ stateDir });
    await sender.close();
    const file = join(stateDir, 'accounts.json');
    const accounts = JSON.parse(readFileSync(file, 'utf8')) as { organizations: Array<{ keys: Array<{ name: string }> }> };
    accounts.organizations[0]!.keys[0]!.name = 'x'.repeat(201);
    writeFileSync(file, JSON.stringify(accounts));
    await expect(createSender({ stateDir })).rejects.toMatchObject({
      code: 'ERR_OPTION_INVALID',
      message: `${file}: organizations[0].keys[0].name must have at most 200 characters, got 201`,
    });
    // A syntax error next to a token: the message never quotes the text around it (V8's does).
    const token = 'jh_inf_SecretSecretSecret0123456789ab';
    writeFileSync(file, `{"organizations": [{"keys": [{"token": ${token}}]}]}`);
    const err = (await createSender({ stateDir }).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(`${file}: not JSON`);
    expect(err.message).not.toContain('jh_inf_');
  });

  test('a key file that is not PEM: refused naming the file, without quoting it', async () => {
    const stateDir = freshDir();
    await (await createSender({ stateDir })).close();
    const file = join(stateDir, 'signing-key.pem');
    writeFileSync(file, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC/secret-key-material');
    const err = (await createSender({ stateDir }).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({
      code: 'ERR_KEY_INVALID',
      message: `createSender: stateDir: ${file}: not a PEM document (no -----BEGIN line)`,
    });
    expect(err.message).not.toContain('secret-key-material');
  });

  test('a folder that cannot be created: refused naming stateDir', async () => {
    const blocker = join(tmp, 'a-file');
    writeFileSync(blocker, 'x');
    await expect(createSender({ stateDir: join(blocker, 'state') })).rejects.toThrow(
      /^createSender: stateDir: cannot create the state folder /,
    );
  });

  test('publicKeyFile receives the SPKI PEM, replacing what was there', async () => {
    const file = join(tmp, 'service-public.pem');
    writeFileSync(file, 'an older key');
    const sender = await createSender({ privateKey: createTestKeyPair().privateKey, publicKeyFile: file });
    try {
      expect(readFileSync(file, 'utf8')).toBe(sender.publicKeyPem);
    } finally {
      await sender.close();
    }
    await expect(createSender({ publicKeyFile: join(tmp, 'missing-dir', 'k.pem') })).rejects.toThrow(
      /^createSender: publicKeyFile: cannot write /,
    );
  });
});

describe('two organizations by default', () => {
  test('each with an inference key; one cannot read the other’s jobs', async () => {
    const sender = await createSender({ privateKey: createTestKeyPair().privateKey });
    try {
      const { inference, otherInference } = sender.devKeys!;
      expect(otherInference).toMatch(/^jh_inf_[A-Za-z0-9]{32}$/);
      expect(otherInference).not.toBe(inference);
      const baseUrl = await sender.listen({ port: 0 });
      const job = await submitJob(baseUrl, inference, { model: 'ocr/ocr_async/google', input: {} });
      expect(job.status).toBe(201);
      const jobUrl = `${baseUrl}/v3/universal-ai/async/${job.json['job_id'] as string}`;
      expect((await fetch(jobUrl, { headers: bearer(inference) })).status).toBe(200);
      expect((await fetch(jobUrl, { headers: bearer(otherInference) })).status).toBe(404);
      expect((await sender.usage()).map((u) => u.organizationId)).toEqual(['dev', 'dev', 'other']);
    } finally {
      await sender.close();
    }
  });
});
