/**
 * `jobhook doctor` (the BUILT binary, spawned): the batch over every generated case (each cause in
 * several variants, intact deliveries too) names each right cause, in order; single requests in
 * human and JSON form with their exit codes; a request captured by a receiver's captureFailures,
 * diagnosed; usage errors.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReceiver, silentLogger } from '@jobhook/core';
import { breakDelivery, buildTestEvent } from '@jobhook/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDiagnosisCases, caseKeys, type DiagnosisCase } from '../../core/test/helpers/broken-deliveries.js';
import { runJobhook as jobhook } from './helpers/jobhook-process.js';

function requestOf(c: Pick<DiagnosisCase, 'headers' | 'body'>): object {
  return { method: 'POST', headers: c.headers, body_b64: c.body.toString('base64') };
}

let dir: string;
let keyArgs: string[];
const cases = buildDiagnosisCases();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'jobhook-doctor-'));
  keyArgs = caseKeys().publicKeyPems.flatMap((pem, i) => {
    const file = join(dir, `key-${i}.pem`);
    writeFileSync(file, pem);
    return ['--public-key', file];
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('jobhook doctor --batch', () => {
  it('diagnoses every generated case with its cause, one line per input, in order', async () => {
    const broken = cases.filter((c) => c.expected !== 'verified');
    expect(broken.length).toBeGreaterThanOrEqual(200);
    const file = join(dir, 'cases.jsonl');
    writeFileSync(file, `${cases.map((c) => JSON.stringify({ id: c.id, ...requestOf(c) })).join('\n')}\n`);
    const started = performance.now();
    const run = await jobhook(['doctor', ...keyArgs, '--batch', file]);
    const elapsed = performance.now() - started;
    // Printed for the record (the figure), not asserted: wall-clock bounds vary with the machine.
    console.log(
      `jobhook doctor --batch: ${cases.length} cases (${broken.length} broken) in ${Math.round(elapsed)} ms, process start included`,
    );
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const lines = run.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; cause: string; verified: boolean; message: string; fix: string });
    expect(lines.map((l) => l.id)).toEqual(cases.map((c) => c.id));
    const wrong = lines.filter((l, i) => l.cause !== cases[i]!.expected).map((l) => `${l.id} -> ${l.cause}`);
    expect(wrong).toEqual([]);
    for (const [i, line] of lines.entries()) expect(line.verified, line.id).toBe(cases[i]!.expected === 'verified');
  });

  it('answers a bad line and goes on', async () => {
    const good = cases.find((c) => c.expected === 'verified')!;
    const input = [
      'not json',
      JSON.stringify({ headers: {}, body_b64: '' }),
      JSON.stringify({ id: 7, headers: 'x', body_b64: '' }),
      JSON.stringify({ id: 8, ...requestOf(good) }),
    ].join('\n');
    const run = await jobhook(['doctor', ...keyArgs, '--batch', '-'], input);
    expect(run.code).toBe(0);
    expect(
      run.out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    ).toEqual([
      { id: null, verified: false, cause: null, code: 'ERR_BATCH_LINE_INVALID', message: 'the line is not JSON' },
      { id: null, verified: false, cause: null, code: 'ERR_BATCH_LINE_INVALID', message: expect.stringContaining('"id"') },
      { id: 7, verified: false, cause: null, code: 'ERR_BATCH_LINE_INVALID', message: expect.stringContaining('"headers"') },
      expect.objectContaining({ id: 8, verified: true, cause: 'verified' }),
    ]);
  });
});

describe('jobhook doctor --request', () => {
  const { main } = caseKeys();
  function requestFile(name: string, c: Pick<DiagnosisCase, 'headers' | 'body'>): string {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(requestOf(c)));
    return file;
  }

  it('says the cause, what happened and what to change; exit 1', async () => {
    const file = requestFile('reserialized.json', breakDelivery(buildTestEvent(), 'body-reserialized', { privateKey: main }));
    const run = await jobhook(['doctor', ...keyArgs, '--request', file]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/^cause: body-reserialized \(the signature does not verify\)\n/);
    expect(run.out).toMatch(
      /What happened: signed by key [0-9a-f]{12}, but this body is what JSON\.parse \+ JSON\.stringify\(value\) make/,
    );
    expect(run.out).toMatch(/What to change: Verify the raw body bytes, before any JSON body parser runs/);
  });

  it('--json: one line; exit 0 when it verifies', async () => {
    const intact = cases.find((c) => c.id === 'verified/python/success/python')!;
    const run = await jobhook(['doctor', ...keyArgs, '--request', '-', '--json'], JSON.stringify(requestOf(intact)));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ verified: true, cause: 'verified', profile: 'python', keyId: expect.any(String) });
  });

  it("diagnoses what a receiver's captureFailures saved, custom header names included", async () => {
    const captures = join(dir, 'captures');
    const headerNames = { signature: 'X-Acme-Signature' };
    const receiver = createReceiver({
      publicKeys: caseKeys().publicKeyPems,
      onEvent: () => {},
      logger: silentLogger,
      headerNames,
      captureFailures: { dir: captures },
    });
    const broken = breakDelivery(buildTestEvent(), 'body-transcoded', { privateKey: main, headerNames, variant: 1 });
    const res = await receiver.handle({ method: 'POST', headers: broken.headers, rawBody: broken.body });
    expect(res.status).toBe(401);
    await expect.poll(() => readdirSync(captures).filter((f) => f.endsWith('.json')).length).toBe(1);
    const [file] = readdirSync(captures);
    const run = await jobhook([
      'doctor',
      ...keyArgs,
      '--signature-header',
      'X-Acme-Signature',
      '--request',
      join(captures, file!),
      '--json',
    ]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.out)).toMatchObject({ cause: 'body-transcoded', detail: { change: 'utf8-read-as-cp1252' } });
  });

  it('finds, from a capture, a signature a proxy moved to another header, while the capture keeps none of its credentials', async () => {
    const captures = join(dir, 'captures-proxy');
    const receiver = createReceiver({
      publicKeys: caseKeys().publicKeyPems,
      onEvent: () => {},
      logger: silentLogger,
      captureFailures: { dir: captures },
    });
    const moved = breakDelivery(buildTestEvent(), 'signature-elsewhere', { privateKey: main, variant: 1 }); // X-Hub-Signature-256: sha256=…
    const credentials = {
      'x-goog-iap-jwt-assertion': 'eyJhbGciOiJFUzI1NiJ9.eyJlbWFpbCI6ImFsaWNlQGV4YW1wbGUuY29tIn0.iap-signature-part',
      'cf-access-jwt-assertion': 'eyJhbGciOiJSUzI1NiJ9.eyJlbWFpbCI6ImJvYkBleGFtcGxlLmNvbSJ9.cf-signature-part',
      'x-forwarded-client-cert': 'By=spiffe://cluster.local/ns/default/sa/receiver;Hash=0a1b2c3d4e5f;Subject="CN=erin"',
      cookie: 'session=7f3a9c1e5b2d4f6a8c0e',
    };
    const res = await receiver.handle({ method: 'POST', headers: { ...credentials, ...moved.headers }, rawBody: moved.body });
    expect(res.status).toBe(401);
    await expect.poll(() => readdirSync(captures).filter((f) => f.endsWith('.json')).length).toBe(1);
    const [file] = readdirSync(captures);
    const text = readFileSync(join(captures, file!), 'utf8');
    for (const value of Object.values(credentials)) expect(text).not.toContain(value);
    const run = await jobhook(['doctor', ...keyArgs, '--request', join(captures, file!), '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.out)).toMatchObject({ cause: 'signature-elsewhere', detail: { header: 'x-hub-signature-256' } });
  });

  it('usage errors and unusable input: exit 2', async () => {
    const file = requestFile('any.json', cases[0]!);
    const noKey = await jobhook(['doctor', '--request', file]);
    expect(noKey).toMatchObject({ code: 2, err: expect.stringContaining('--public-key FILE is required') });
    const both = await jobhook(['doctor', ...keyArgs, '--request', file, '--batch', file]);
    expect(both).toMatchObject({ code: 2, err: expect.stringContaining('one of --request FILE or --batch FILE') });
    const notRequest = await jobhook(['doctor', ...keyArgs, '--request', '-'], '{"headers":[]}');
    expect(notRequest).toMatchObject({ code: 2, err: expect.stringContaining('ERR_REQUEST_INVALID') });
    const badHeader = await jobhook(['doctor', ...keyArgs, '--request', file, '--signature-header', 'bad header']);
    expect(badHeader).toMatchObject({ code: 2, err: expect.stringContaining('ERR_OPTION_INVALID') });
  });
});
