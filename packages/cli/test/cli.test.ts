/**
 * End-to-end tests of the BUILT `jobhook` binary (run `npm run build` first; the root `npm test`
 * does), spawned as real processes, plus one in-process run of `main` with plain streams.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/index.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, '../dist/bin.js');
const REPO = resolve(HERE, '../../..');
/** The repository's signature vectors (vectors/, made by vectors/generate.py); missing ones fail the file. */
const VECTORS = resolve(REPO, 'vectors');
const VECTORS_FILE = join(VECTORS, 'vectors.jsonl');
const MAIN_PKCS1 = join(VECTORS, 'keys/main.public.pkcs1.pem');
const MAIN_SPKI = join(VECTORS, 'keys/main.public.pem');
const OTHER_SPKI = join(VECTORS, 'keys/other.public.pem');
const HAS_PYTHON = spawnSync('python3', ['-c', 'pass']).status === 0;

interface Vector {
  id: string;
  category: string;
  body_b64: string;
  signature: string;
  expect: 'valid' | 'invalid' | 'malformed' | 'valid-or-malformed' | 'not-valid';
}

interface BatchLine {
  id: string | number | null;
  ok: boolean;
  code: string | null;
  profile: string | null;
  job_id: unknown;
}

interface Run {
  code: number | null;
  stdout: Buffer;
  out: string;
  err: string;
}

/** Spawns the built binary; stdin is always ended, so a command reading it never waits. */
function jobhook(args: readonly string[], input: string | Buffer = ''): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdout = Buffer.concat(out);
      resolvePromise({ code, stdout, out: stdout.toString('utf8'), err: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => {}); // the command may exit before reading all of stdin
    child.stdin.end(input);
  });
}

function jsonLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/** valid / invalid / malformed, as vectors/README.md classifies a verifier's answer. */
function classify(line: BatchLine): 'valid' | 'invalid' | 'malformed' {
  if (line.ok) return 'valid';
  return line.code?.startsWith('ERR_SIGNATURE') === true ? 'invalid' : 'malformed';
}

function matches(expected: Vector['expect'], got: ReturnType<typeof classify>): boolean {
  if (expected === 'valid-or-malformed') return got === 'valid' || got === 'malformed';
  if (expected === 'not-valid') return got !== 'valid';
  return got === expected;
}

function keyId(pemFile: string): string {
  const der = createPublicKey(readFileSync(pemFile)).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

/** The reference canonical bytes, from Python itself. */
function pythonCanonical(body: string, ensureAscii: boolean): Buffer {
  const script =
    'import json,sys; sys.stdout.buffer.write(json.dumps(json.loads(sys.stdin.buffer.read()), ' +
    `sort_keys=True, indent=2, ensure_ascii=${ensureAscii ? 'True' : 'False'}).encode("utf-8"))`;
  const res = spawnSync('python3', ['-c', script], { input: body });
  if (res.status !== 0) throw new Error(`python3 failed: ${res.stderr.toString()}`);
  return res.stdout;
}

const vectors: Vector[] = jsonLines<Vector>(readFileSync(VECTORS_FILE, 'utf8'));
const firstValid = vectors.find((v) => v.expect === 'valid' && v.category === 'realistic-requests-body')!;
const tampered = vectors.find((v) => v.category === 'tamper-job_id')!;
let tmp: string;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npm run build)`);
  tmp = mkdtempSync(join(tmpdir(), 'jobhook-cli-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('verify --batch over the signature vectors', () => {
  for (const [form, key] of [
    ['PKCS#1', MAIN_PKCS1],
    ['SPKI', MAIN_SPKI],
  ] as const) {
    it(`classifies every vector as expected with the ${form} key, in input order`, async () => {
      const res = await jobhook(['verify', '--public-key', key, '--batch', VECTORS_FILE]);
      expect(res.code).toBe(0);
      const lines = jsonLines<BatchLine>(res.out);
      expect(lines.map((l) => l.id)).toEqual(vectors.map((v) => v.id));
      const wrong = lines.flatMap((line, i) => {
        const v = vectors[i]!;
        return matches(v.expect, classify(line)) ? [] : [`${v.id}: expected ${v.expect}, got ${JSON.stringify(line)}`];
      });
      expect(wrong).toEqual([]);
      for (const line of lines) {
        expect(Object.keys(line)).toEqual(['id', 'ok', 'code', 'profile', 'job_id']);
        expect(line.code === null).toBe(line.ok);
        expect(line.profile !== null).toBe(line.ok);
        if (!line.ok) expect(line.job_id).toBeNull();
      }
    });
  }

  it('reports bad input lines as ERR_BATCH_LINE_INVALID and keeps going', async () => {
    const good = JSON.stringify(firstValid);
    const input = [
      'not json',
      good,
      '{"id":"no-body","signature":"ab"}',
      '[1,2]',
      '{"id":"bad-b64","body_b64":"@@@","signature":"ab"}',
      '',
      good.replace(firstValid.id, 'again'),
    ].join('\n');
    const res = await jobhook(['verify', '--public-key', MAIN_SPKI, '--batch', '-'], input);
    expect(res.code).toBe(0);
    const lines = jsonLines<BatchLine>(res.out);
    expect(lines.map((l) => [l.id, l.ok, l.code])).toEqual([
      [null, false, 'ERR_BATCH_LINE_INVALID'],
      [firstValid.id, true, null],
      ['no-body', false, 'ERR_BATCH_LINE_INVALID'],
      [null, false, 'ERR_BATCH_LINE_INVALID'],
      ['bad-b64', false, 'ERR_BATCH_LINE_INVALID'],
      ['again', true, null],
    ]);
  });

  it('processes 3,000 lines from stdin in one process, in order', async () => {
    const input: string[] = [];
    const expected: Vector[] = [];
    for (let i = 0; input.length < 3000; i++) {
      const v = vectors[i % vectors.length]!;
      const copy = { ...v, id: `${v.id}#${i}` };
      input.push(JSON.stringify(copy));
      expected.push(copy);
    }
    const res = await jobhook(['verify', '--public-key', MAIN_PKCS1, '--batch', '-'], `${input.join('\n')}\n`);
    expect(res.code).toBe(0);
    const lines = jsonLines<BatchLine>(res.out);
    expect(lines).toHaveLength(3000);
    expect(lines.map((l) => l.id)).toEqual(expected.map((v) => v.id));
    expect(lines.every((l, i) => matches(expected[i]!.expect, classify(l)))).toBe(true);
  });

  it('fails before any output when the batch file or a key is unusable', async () => {
    const missing = await jobhook(['verify', '--public-key', MAIN_SPKI, '--batch', join(tmp, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.out).toBe('');
    expect(missing.err).toContain('ERR_FILE_UNREADABLE');
    const badKey = await jobhook(['verify', '--public-key', VECTORS_FILE, '--batch', VECTORS_FILE]);
    expect(badKey.code).toBe(2);
    expect(badKey.err).toContain('ERR_KEY_INVALID');
  });

  it('runs in-process through main() with plain streams', async () => {
    const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
    io.stdin.end(`${JSON.stringify(firstValid)}\n`);
    const code = await main(['verify', '--public-key', MAIN_SPKI, '--batch', '-'], io);
    io.stdout.end();
    expect(code).toBe(0);
    const lines = jsonLines<BatchLine>(String(io.stdout.read()));
    expect(lines).toEqual([expect.objectContaining({ id: firstValid.id, ok: true, code: null })]);
  });
});

describe('verify (single)', () => {
  const body = Buffer.from(firstValid.body_b64, 'base64');
  const jobId = (JSON.parse(body.toString('utf8')) as { job_id: string }).job_id;
  let bodyFile: string;
  beforeAll(() => {
    bodyFile = join(tmp, 'body.json');
    writeFileSync(bodyFile, body);
  });

  it('accepts a valid body from --body and from stdin alike', async () => {
    const fromFile = await jobhook(['verify', '--public-key', MAIN_PKCS1, '--signature', firstValid.signature, '--body', bodyFile]);
    const fromStdin = await jobhook(['verify', '--public-key', MAIN_PKCS1, '--signature', firstValid.signature], body);
    for (const res of [fromFile, fromStdin]) {
      expect(res.code).toBe(0);
      expect(res.out.endsWith('\n')).toBe(true);
      expect(JSON.parse(res.out)).toEqual({ ok: true, job_id: jobId, profile: 'python', key: keyId(MAIN_SPKI) });
    }
  });

  it('tries every --public-key (rotation) and names the one that verified', async () => {
    const res = await jobhook(['verify', '--public-key', OTHER_SPKI, '--public-key', MAIN_SPKI, '--signature', firstValid.signature], body);
    expect(res.code).toBe(0);
    expect((JSON.parse(res.out) as { key: string }).key).toBe(keyId(MAIN_SPKI));
  });

  it('exits 1 on a tampered body or a missing signature', async () => {
    const res = await jobhook(
      ['verify', '--public-key', MAIN_SPKI, '--signature', tampered.signature],
      Buffer.from(tampered.body_b64, 'base64'),
    );
    expect(res.code).toBe(1);
    expect(JSON.parse(res.out)).toMatchObject({ ok: false, code: 'ERR_SIGNATURE_INVALID' });
    const empty = await jobhook(['verify', '--public-key', MAIN_SPKI, '--signature', ''], body);
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.out)).toMatchObject({ ok: false, code: 'ERR_SIGNATURE_MISSING' });
  });

  it('exits 2 on a malformed body, with the JSON line', async () => {
    for (const [input, code] of [
      ['{"job_id": ', 'ERR_BODY_MALFORMED'],
      ['[1, 2]', 'ERR_BODY_NOT_OBJECT'],
    ] as const) {
      const res = await jobhook(['verify', '--public-key', MAIN_SPKI, '--signature', firstValid.signature], input);
      expect(res.code).toBe(2);
      const line = JSON.parse(res.out) as { ok: boolean; code: string; message: string };
      expect(line).toMatchObject({ ok: false, code });
      expect(line.message).not.toBe('');
    }
  });

  it('exits 2 with the JSON line when a key file is unreadable', async () => {
    const res = await jobhook(['verify', '--public-key', join(tmp, 'missing.pem'), '--signature', 'ab'], body);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.out)).toMatchObject({ ok: false, code: 'ERR_FILE_UNREADABLE' });
  });

  it('treats a missing --signature or --public-key flag as a usage error (exit 2)', async () => {
    const noSig = await jobhook(['verify', '--public-key', MAIN_SPKI, '--body', bodyFile]);
    expect(noSig.code).toBe(2);
    expect(noSig.out).toBe('');
    expect(noSig.err).toContain('--signature');
    expect(noSig.err).toContain('Usage:');
    const noKey = await jobhook(['verify', '--signature', firstValid.signature, '--body', bodyFile]);
    expect(noKey.code).toBe(2);
    expect(noKey.err).toContain('--public-key');
  });
});

describe('canonicalize', () => {
  const body = '{"b": 1.0, "a": [1e16, "caf\u00e9 \u2603 \ud83d\ude00", -0.0], "c": {"z": null, "y": true, "\u00e9": 10}}';

  it.skipIf(!HAS_PYTHON)('writes exactly the canonical bytes from a file and from stdin', async () => {
    const file = join(tmp, 'canon.json');
    writeFileSync(file, body);
    for (const [profile, ascii] of [
      ['python-ascii', true],
      ['python', false],
    ] as const) {
      const expected = pythonCanonical(body, ascii);
      const fromFile = await jobhook(['canonicalize', '--profile', profile, file]);
      const fromStdin = await jobhook(['canonicalize', '--profile', profile], body);
      for (const res of [fromFile, fromStdin]) {
        expect(res.code).toBe(0);
        expect(res.stdout.equals(expected)).toBe(true);
      }
    }
  });

  it('exits 2 with a message on stderr for a bad body or profile', async () => {
    const bad = await jobhook(['canonicalize'], '{"a": 1');
    expect(bad.code).toBe(2);
    expect(bad.out).toBe('');
    expect(bad.err).toContain('ERR_BODY_MALFORMED');
    const profile = await jobhook(['canonicalize', '--profile', 'yaml'], '{}');
    expect(profile.code).toBe(2);
    expect(profile.err).toContain("unknown profile 'yaml'");
  });
});

describe('keygen and sign', () => {
  let dir: string;
  let keygenOut: string;
  beforeAll(async () => {
    dir = join(tmp, 'keys');
    const res = await jobhook(['keygen', '--out', dir, '--bits', '2048']);
    expect(res.code, res.err).toBe(0);
    keygenOut = res.out;
  });

  it('writes PKCS#8 (0600), SPKI and PKCS#1 files and prints the paths and key id', () => {
    expect(readFileSync(join(dir, 'service-private.pem'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(readFileSync(join(dir, 'service-public.pem'), 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(readFileSync(join(dir, 'service-public.pkcs1.pem'), 'utf8')).toMatch(/^-----BEGIN RSA PUBLIC KEY-----/);
    expect(statSync(join(dir, 'service-private.pem')).mode & 0o777).toBe(0o600);
    for (const f of ['service-private.pem', 'service-public.pem', 'service-public.pkcs1.pem']) expect(keygenOut).toContain(join(dir, f));
    expect(keygenOut).toContain(keyId(join(dir, 'service-public.pem')));
  });

  it('refuses to overwrite without --force, and overwrites with it', async () => {
    const before = readFileSync(join(dir, 'service-private.pem'), 'utf8');
    const again = await jobhook(['keygen', '--out', dir, '--bits', '2048']);
    expect(again.code).toBe(2);
    expect(again.err).toContain('--force');
    expect(readFileSync(join(dir, 'service-private.pem'), 'utf8')).toBe(before);

    const other = join(tmp, 'forced');
    expect((await jobhook(['keygen', '--out', other, '--bits', '2048'])).code).toBe(0);
    const first = readFileSync(join(other, 'service-private.pem'), 'utf8');
    const forced = await jobhook(['keygen', '--out', other, '--bits', '2048', '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(join(other, 'service-private.pem'), 'utf8')).not.toBe(first);
  });

  it('refuses --bits 1024', async () => {
    const out = join(tmp, 'weak');
    const res = await jobhook(['keygen', '--out', out, '--bits', '1024']);
    expect(res.code).toBe(2);
    expect(res.err).toContain('--bits');
    expect(existsSync(join(out, 'service-private.pem'))).toBe(false);
  });

  it('signs a body that verify then accepts, with either public key form', async () => {
    const body = '{"event": "async_job_completed", "job_id": "j-1", "price": 1.10}';
    const file = join(tmp, 'to-sign.json');
    writeFileSync(file, body);
    const signed = await jobhook(['sign', '--private-key', join(dir, 'service-private.pem'), file]);
    expect(signed.code, signed.err).toBe(0);
    expect(signed.out).toMatch(/^[0-9a-f]+\n$/);
    const fromStdin = await jobhook(['sign', '--private-key', join(dir, 'service-private.pem')], body);
    expect(fromStdin.out).toBe(signed.out); // PKCS#1 v1.5 signatures are deterministic
    for (const pub of ['service-public.pem', 'service-public.pkcs1.pem']) {
      const res = await jobhook(['verify', '--public-key', join(dir, pub), '--signature', signed.out.trim(), '--body', file]);
      expect(res.code).toBe(0);
      expect(JSON.parse(res.out)).toMatchObject({ ok: true, job_id: 'j-1', profile: 'python' });
    }
  });

  it('signs under --profile, which verify reports and can be limited to', async () => {
    const body = '{"job_id": "caf\u00e9"}';
    const signed = await jobhook(['sign', '--private-key', join(dir, 'service-private.pem'), '--profile', 'python-ascii'], body);
    expect(signed.code).toBe(0);
    const sig = signed.out.trim();
    const ok = await jobhook(['verify', '--public-key', join(dir, 'service-public.pem'), '--signature', sig], body);
    expect(JSON.parse(ok.out)).toMatchObject({ ok: true, profile: 'python-ascii' });
    const limited = await jobhook(
      ['verify', '--public-key', join(dir, 'service-public.pem'), '--profile', 'python', '--signature', sig],
      body,
    );
    expect(limited.code).toBe(1);
  });

  it('exits 2 on a bad body or key', async () => {
    const bad = await jobhook(['sign', '--private-key', join(dir, 'service-private.pem')], 'nope');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('ERR_BODY_MALFORMED');
    const key = await jobhook(['sign', '--private-key', join(dir, 'service-public.pem')], '{}');
    expect(key.code).toBe(2);
    expect(key.err).toContain('ERR_KEY_INVALID');
  });
});

describe('help and usage', () => {
  const FLAGS: Record<string, string[]> = {
    verify: ['--public-key', '--profile', '--signature', '--body', '--batch', '--help'],
    canonicalize: ['--profile', '--help'],
    sign: ['--private-key', '--profile', '--help'],
    keygen: ['--out', '--bits', '--force', '--help'],
  };

  for (const [command, flags] of Object.entries(FLAGS)) {
    it(`${command} --help exits 0 and lists its flags`, async () => {
      const res = await jobhook([command, '--help']);
      expect(res.code).toBe(0);
      for (const flag of flags) expect(res.out).toContain(flag);
    });
  }

  it('jobhook --help lists every command; --version prints the package version', async () => {
    const help = await jobhook(['--help']);
    expect(help.code).toBe(0);
    for (const command of Object.keys(FLAGS)) expect(help.out).toContain(command);
    const version = await jobhook(['--version']);
    const pkg = JSON.parse(readFileSync(resolve(HERE, '../package.json'), 'utf8')) as { version: string };
    expect(version.code).toBe(0);
    expect(version.out).toBe(`${pkg.version}\n`);
  });

  it('exits 2 naming an unknown command or flag, with usage on stderr', async () => {
    const command = await jobhook(['frobnicate']);
    expect(command.code).toBe(2);
    expect(command.err).toContain("unknown command 'frobnicate'");
    expect(command.err).toContain('Usage:');
    const flag = await jobhook(['canonicalize', '--frob']);
    expect(flag.code).toBe(2);
    expect(flag.err).toContain('--frob');
    expect(flag.err).toContain('Usage: jobhook canonicalize');
    const none = await jobhook([]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('Usage:');
  });
});
