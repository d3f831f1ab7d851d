/**
 * `jobhook serve` (the BUILT binary, spawned) and its state folder: a restart signs with the same key
 * and takes the same API keys, so a receiver started before it keeps verifying; the folder's
 * permissions and `.gitignore`; `--private-key` / `--config` before the folder; `--ephemeral` writes
 * nothing; a 401 attempt names the key it was signed with, as the receiver names its own.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJsonLogger, createKeyRing, createReceiver, type Receiver } from '@jobhook/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_PRIVATE_KEY,
  DEMO_PUBLIC_KEY,
  serveReceiver,
  startServe,
  type ReceiverServer,
  type ServeChild,
} from './helpers/jobhook-process.js';

const LOCAL = ['--allow-insecure-receivers', '--allow-receiver', '127.0.0.0/8', '--job-delay-ms', '0'];

let tmp: string;
const running = new Set<ServeChild>();
const closers: Array<() => Promise<void>> = [];

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-serve-state-'));
});
afterEach(async () => {
  for (const child of running) await child.stop('SIGKILL');
  running.clear();
  for (const close of closers.splice(0)) await close();
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A fresh, empty working directory for one run. */
function workDir(): string {
  const dir = join(tmp, randomUUID());
  mkdirSync(dir);
  return dir;
}

async function serve(args: readonly string[], cwd: string): Promise<ServeChild> {
  const child = await startServe(args, { cwd });
  running.add(child);
  return child;
}

async function stop(child: ServeChild): Promise<number | null> {
  running.delete(child);
  return child.stop('SIGTERM');
}

/** A receiver verifying with `publicKeys`, its log lines kept, behind node:http. */
async function receiverWith(
  publicKeys: Buffer,
): Promise<{ receiver: Receiver; server: ReceiverServer; handled: string[]; logs: Array<Record<string, unknown>> }> {
  const handled: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const receiver = createReceiver({
    publicKeys,
    onEvent: (event) => void handled.push(event.job_id),
    logger: createJsonLogger({ level: 'info', write: (line) => void logs.push(JSON.parse(line) as Record<string, unknown>) }),
  });
  const server = await serveReceiver(() => receiver);
  closers.push(async () => {
    await server.close();
    await receiver.close();
  });
  return { receiver, server, handled, logs };
}

/** Submits a job aimed at `receiverUrl` and resolves with its deliveries once the delivery has ended. */
async function deliverOne(child: ServeChild, apiKey: string, receiverUrl: string): Promise<{ jobId: string; deliveries: Deliveries }> {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const submitted = await fetch(`${child.baseUrl}/v3/universal-ai/async`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'ocr/ocr_async/amazon', input: { file: 'x' }, webhook_receiver: receiverUrl }),
  });
  expect(submitted.status).toBe(201);
  const { job_id: jobId } = (await submitted.json()) as { job_id: string };
  const read = async (): Promise<Deliveries> =>
    (await fetch(`${child.baseUrl}/v3/universal-ai/async/${jobId}/deliveries`, { headers })).json() as Promise<Deliveries>;
  await expect.poll(async () => (await read()).delivery, { timeout: 15_000 }).not.toMatch(/^(pending|null)$/);
  return { jobId, deliveries: await read() };
}

interface Deliveries {
  delivery: string | null;
  attempts: Array<{ status_code: number | null; outcome: string; key_id: string | null }>;
}

describe('jobhook serve keeps its signing key and API keys in a state folder', () => {
  it('after a restart with the same folder, a receiver started before it verifies a job submitted after, with the same API key', async () => {
    const cwd = workDir();
    const state = join(cwd, 'state');
    const first = await serve(['--state-dir', state, '--verbose', ...LOCAL], cwd);
    const publicKeyFile = first.field('public key');
    expect(publicKeyFile).toBe(join(cwd, 'service-public.pem'));
    const apiKey = first.field('inference key');
    const keyId = first.field('signing key id');
    // The id in the banner is the one a receiver computes for the key in the file it reads.
    expect(createKeyRing(readFileSync(publicKeyFile)).keys[0]!.id).toBe(keyId);

    // The receiver starts now, with the key the first run wrote, and runs through the restart.
    const { receiver, server, handled } = await receiverWith(readFileSync(publicKeyFile));
    expect(await stop(first)).toBe(0);
    expect(existsSync(publicKeyFile)).toBe(true); // kept for the next receiver to read

    const second = await serve(['--state-dir', state, '--verbose', ...LOCAL], cwd);
    expect(second.field('signing key id')).toBe(keyId);
    expect(second.field('inference key')).toBe(apiKey);
    expect(second.field('other org key')).toBe(first.field('other org key'));
    const { jobId, deliveries } = await deliverOne(second, apiKey, server.url);
    expect(deliveries.delivery).toBe('delivered');
    expect(deliveries.attempts.map((a) => a.status_code)).toEqual([200]);
    expect(handled).toEqual([jobId]);
    expect(receiver.stats()).toMatchObject({ verified: 1, rejected: {} });

    // The logs (--verbose) carry no secret: neither an API key nor the private key.
    expect(second.err()).toContain('webhook delivered');
    for (const child of [first, second]) {
      expect(child.err()).not.toContain(apiKey);
      expect(child.err()).not.toContain(second.field('management key'));
      expect(child.err()).not.toContain('PRIVATE KEY');
      expect(child.banner).not.toContain('PRIVATE KEY');
    }
    expect(await stop(second)).toBe(0);
  });

  it('by default: .jobhook in the working directory, 0700 with a .gitignore of *, the key and accounts 0600; git sees only service-public.pem', async () => {
    const cwd = workDir();
    execFileSync('git', ['init', '-q', cwd]);
    const child = await serve([], cwd);
    const dir = join(cwd, '.jobhook');
    expect(child.field('state')).toBe(dir);
    expect(child.field('public key')).toBe(join(cwd, 'service-public.pem'));
    const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);
    expect(mode(dir)).toBe('700');
    expect(mode(join(dir, 'signing-key.pem'))).toBe('600');
    expect(mode(join(dir, 'accounts.json'))).toBe('600');
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').split('\n')).toContain('*');
    expect(readFileSync(join(dir, 'signing-key.pem'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(readFileSync(join(dir, 'accounts.json'), 'utf8')).toContain(child.field('inference key'));
    // No temporary file is left beside them (each is written aside, then linked or renamed into place).
    expect(readdirSync(dir).sort()).toEqual(['.gitignore', 'accounts.json', 'signing-key.pem']);
    const untracked = execFileSync('git', ['-C', cwd, 'status', '--porcelain', '--untracked-files=all'], { encoding: 'utf8' });
    expect(untracked.trim().split('\n')).toEqual(['?? service-public.pem']);
    expect(await stop(child)).toBe(0);
  });

  it('--ephemeral writes nothing: no folder, the public key in a temp file removed on exit, a new key each run', async () => {
    const cwd = workDir();
    const a = await serve(['--ephemeral'], cwd);
    const b = await serve(['--ephemeral'], cwd);
    expect(a.field('state')).toBe('none');
    const publicKeyFile = a.field('public key');
    expect(publicKeyFile.startsWith(cwd)).toBe(false);
    expect(existsSync(publicKeyFile)).toBe(true);
    expect(readdirSync(cwd)).toEqual([]);
    expect(a.field('signing key id')).not.toBe(b.field('signing key id'));
    expect(a.field('inference key')).not.toBe(b.field('inference key'));
    expect(await stop(a)).toBe(0);
    expect(await stop(b)).toBe(0);
    expect(existsSync(publicKeyFile)).toBe(false);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('--private-key and --config take precedence over the folder, which keeps only what they do not give', async () => {
    const cwd = workDir();
    const demoId = createKeyRing(readFileSync(DEMO_PUBLIC_KEY)).keys[0]!.id;
    const keyGiven = await serve(['--state-dir', 'kept', '--private-key', DEMO_PRIVATE_KEY], cwd);
    expect(keyGiven.field('signing key id')).toBe(demoId);
    expect(readdirSync(join(cwd, 'kept')).sort()).toEqual(['.gitignore', 'accounts.json']);
    expect(createKeyRing(readFileSync(join(cwd, 'service-public.pem'))).keys[0]!.id).toBe(demoId);
    expect(await stop(keyGiven)).toBe(0);

    const token = `jh_inf_${'c'.repeat(32)}`;
    const config = join(cwd, 'accounts-given.json');
    const key = { id: randomUUID(), token, kind: 'inference', name: 'ci', member: 'ada@acme.test', balance: null, revoked: false };
    writeFileSync(config, JSON.stringify({ organizations: [{ id: 'acme', members: ['ada@acme.test'], keys: [key] }] }));
    const both = await serve(
      ['--state-dir', 'unused', '--private-key', DEMO_PRIVATE_KEY, '--config', config, '--public-key-out', 'pub.pem'],
      cwd,
    );
    expect(both.banner).not.toContain('inference key');
    expect(both.field('public key')).toBe(join(cwd, 'pub.pem'));
    expect(existsSync(join(cwd, 'unused'))).toBe(false);
    expect(await stop(both)).toBe(0);
  });

  it('a state folder or public key file that cannot be written: exit 2, a file error naming the flag and the path', async () => {
    const cwd = workDir();
    writeFileSync(join(cwd, 'a-file'), 'x');
    await expect(startServe(['--state-dir', 'a-file/state'], { cwd })).rejects.toThrow(
      /exited 2 .*ERR_FILE_UNWRITABLE: --state-dir: cannot create the state folder .*a-file\/state: .*or --ephemeral to keep nothing\)/s,
    );
    await expect(startServe(['--state-dir', 'ok', '--public-key-out', 'a-file/k.pem'], { cwd })).rejects.toThrow(
      /exited 2 .*ERR_FILE_UNWRITABLE: --public-key-out: cannot write .*a-file\/k\.pem/s,
    );
  });

  it('a state folder whose key is unusable: exit 2 naming the file', async () => {
    const cwd = workDir();
    mkdirSync(join(cwd, 'broken'), { mode: 0o700 });
    writeFileSync(join(cwd, 'broken', 'signing-key.pem'), 'not a key\n', { mode: 0o600 });
    await expect(startServe(['--state-dir', 'broken'], { cwd })).rejects.toThrow(/exited 2 .*ERR_KEY_INVALID: .*broken\/signing-key\.pem/s);
  });
});

describe('a delivery answered 401', () => {
  it('records the id of the key it was signed with, in the form the receiver logs as keyIdsTried', async () => {
    const cwd = workDir();
    const child = await serve(['--ephemeral', '--verbose', ...LOCAL], cwd);
    // A receiver holding another key (the demo key): every delivery is 401 unknown-key.
    const { server, logs } = await receiverWith(readFileSync(DEMO_PUBLIC_KEY));
    const { jobId, deliveries } = await deliverOne(child, child.field('inference key'), server.url);
    expect(deliveries.delivery).toBe('rejected');
    const keyId = child.field('signing key id');
    expect(deliveries.attempts).toEqual([expect.objectContaining({ status_code: 401, outcome: 'rejected', key_id: keyId })]);
    // The receiver's refusal line (an unverified delivery's job id is not logged: it is not trusted).
    const refusal = logs.find((line) => line['status'] === 401 && Array.isArray(line['keyIdsTried']));
    expect(refusal).toMatchObject({ cause: 'unknown-key', keyIdsTried: [createKeyRing(readFileSync(DEMO_PUBLIC_KEY)).keys[0]!.id] });
    // Same form, a different key: what the two sides print says why.
    expect(keyId).toMatch(/^[0-9a-f]{64}$/);
    expect((refusal!['keyIdsTried'] as string[])[0]).toMatch(/^[0-9a-f]{64}$/);
    expect((refusal!['keyIdsTried'] as string[])[0]).not.toBe(keyId);
    // The service's own log line of the attempt names it too.
    const logged = child
      .err()
      .split('\n')
      .filter((line) => line.includes('webhook rejected'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toEqual([expect.objectContaining({ jobId, statusCode: 401, keyId })]);
    expect(await stop(child)).toBe(0);
  });
});
