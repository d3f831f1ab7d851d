/**
 * The packages as a user gets them: `npm pack` of each package (what `npm publish` uploads), installed
 * with `npm install` into apps in os.tmpdir(), outside the repository (no workspace links; every
 * `@jobhook/*` package comes from its tarball, the frameworks from the registry), then:
 *
 * - the Express, Koa and Fastify quickstarts, taken from the READMEs by their
 *   `<!-- quickstart:<framework>:<esm|cjs> -->` markers and run as written (`.mjs` and `.cjs`), each
 *   get a delivery signed with the installed `@jobhook/core/testing`: handled (200), the same delivery
 *   again (200 `duplicate: true`, handler not called), and a fail event (handled);
 * - `@jobhook/cli` alone installs fewer than 15 packages (not the reference service), its light
 *   commands work, and `jobhook serve` names the package to install.
 *
 * The quickstarts leave `saveResult`, `markFailed` and `handleJob` to the reader and listen on
 * `PORT`: fixtures/quickstart-preload.cjs (`node --require`) defines those as globals that report their
 * calls, and reports the port (the test sets PORT=0), so the README code runs unchanged.
 *
 * Needs the packages built (`npm test` builds first) and npm; the frameworks come from npm's cache
 * when it has them (`--prefer-offline`), else from the registry. Anything missing fails the file.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmEnv } from '../helpers/npm-env.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');
const FIXTURES = join(HERE, 'fixtures');
const run = promisify(execFile);

/** The packages the quickstarts and the CLI need; each is packed from packages/<name>. */
const PACKED = ['core', 'express', 'koa', 'fastify', 'cli'] as const;
/** The frameworks, at the versions the repository's own tests run against. */
const FRAMEWORKS = ['express', 'koa', '@koa/router', 'fastify'] as const;
const FRAMEWORK_NAMES = ['express', 'koa', 'fastify'] as const;
const FORMATS = ['esm', 'cjs'] as const;
/** Packages the light CLI must not bring: the reference service and what it runs on. */
const SERVICE_PACKAGES = ['@jobhook/sender', '@jobhook/delivery', '@jobhook/client', 'fastify', 'bullmq', 'ioredis', 'luxon'];

type Framework = (typeof FRAMEWORK_NAMES)[number];
type Format = (typeof FORMATS)[number];

interface SignedDelivery {
  jobId: string;
  event: { status: string; output?: unknown; error?: { message: string } };
  headers: Record<string, string>;
  body: string;
}

interface Signed {
  publicKeyPem: string;
  deliveries: Record<string, { success: SignedDelivery; fail: SignedDelivery }>;
}

interface Answer {
  status: number;
  body: unknown;
}

interface Reported {
  call?: 'saveResult' | 'markFailed' | 'handleJob';
  jobId?: string;
  listening?: { address: string; port: number };
  [key: string]: unknown;
}

let root: string;
let receivers: string;
let cliApp: string;
let signed: Signed;

async function npm(cwd: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run('npm', [...args], { cwd, env: npmEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** `npm install` of exactly these specs into a new app directory with a default (CommonJS) package.json. */
async function installApp(dir: string, specs: readonly string[]): Promise<void> {
  mkdirSync(dir);
  const manifest = { name: 'app', version: '1.0.0', private: true, type: 'commonjs' };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await npm(dir, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs]);
}

function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The code block right after `<!-- quickstart:<framework>:<format> … -->`, from whichever README holds it. */
function quickstart(framework: Framework, format: Format): { code: string; where: string } {
  const files = [join(REPO, 'README.md'), ...readdirSync(join(REPO, 'packages')).map((name) => join(REPO, 'packages', name, 'README.md'))];
  const marker = new RegExp(`^<!-- quickstart:${framework}:${format}\\b[^\\n]*-->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  const found = files
    .filter((file) => existsSync(file))
    .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(marker)].map((match) => ({ code: match[1]!, where: relative(REPO, file) })));
  if (found.length !== 1) {
    throw new Error(`expected one quickstart:${framework}:${format} block in the READMEs, found ${found.length}`);
  }
  return found[0]!;
}

/**
 * Runs a quickstart file in the receivers app until it listens, posts the deliveries one after the
 * other, stops it (SIGTERM), and returns the answers and what the app reported.
 */
async function deliverTo(file: string, deliveries: readonly SignedDelivery[]): Promise<{ answers: Answer[]; reports: Reported[] }> {
  const child = spawn(process.execPath, ['--require', './quickstart-preload.cjs', file], {
    cwd: receivers,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const reports: Reported[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  const closed = once(lines, 'close');
  const listening = new Promise<{ address: string; port: number }>((resolveListening, reject) => {
    lines.on('line', (line) => {
      const report = parseReport(line);
      reports.push(report);
      if (report.listening !== undefined) resolveListening(report.listening);
    });
    void exited.then(([code, signal]) => reject(new Error(`exited (${String(code ?? signal)}) before listening`)));
  });
  try {
    const { address, port } = await listening;
    const host = address === '::' || address === '0.0.0.0' ? '127.0.0.1' : address;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/webhooks/jobs`;
    const answers: Answer[] = [];
    for (const delivery of deliveries) {
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: Buffer.from(delivery.body, 'base64') });
      answers.push({ status: response.status, body: await response.json() });
    }
    return { answers, reports: reports.filter((report) => report.call !== undefined) };
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}\nits stderr:\n${stderr}`, { cause: err });
  } finally {
    child.kill('SIGTERM');
    await Promise.all([exited, closed]);
  }
}

/** One stdout line of a quickstart: a preload report, or whatever else the app printed. */
function parseReport(line: string): Reported {
  try {
    return JSON.parse(line) as Reported;
  } catch {
    return { text: line };
  }
}

beforeAll(async () => {
  const missing = PACKED.filter((name) => !existsSync(join(REPO, 'packages', name, 'dist/index.js')));
  if (missing.length > 0) throw new Error(`not built: ${missing.join(', ')}; run \`npm run build\` first`);

  root = mkdtempSync(join(tmpdir(), 'jobhook-pack-'));
  const packs = join(root, 'packs');
  mkdirSync(packs);
  const packed = JSON.parse(
    await npm(REPO, ['pack', '--json', '--pack-destination', packs, ...PACKED.flatMap((name) => ['-w', `packages/${name}`])]),
  ) as { name: string; filename: string }[];
  const tarball = (name: string): string => join(packs, packed.find((pack) => pack.name === `@jobhook/${name}`)!.filename);

  receivers = join(root, 'quickstarts');
  cliApp = join(root, 'cli');
  await Promise.all([
    installApp(receivers, [
      ...['core', 'express', 'koa', 'fastify'].map(tarball),
      ...FRAMEWORKS.map((name) => `${name}@${installedVersion(name)}`),
    ]),
    installApp(cliApp, [tarball('cli'), tarball('core')]),
  ]);

  for (const fixture of ['quickstart-preload.cjs', 'sign-deliveries.mjs']) copyFileSync(join(FIXTURES, fixture), join(receivers, fixture));
  const names = FRAMEWORK_NAMES.flatMap((framework) => FORMATS.map((format) => `${framework}:${format}`));
  const { stdout } = await run(process.execPath, ['sign-deliveries.mjs', ...names], { cwd: receivers });
  signed = JSON.parse(stdout) as Signed;
  writeFileSync(join(receivers, 'service-public.pem'), signed.publicKeyPem);
}, 120_000);

afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

describe('packed and installed outside the repository', () => {
  it('takes every @jobhook package from its tarball, none linked to the workspace', () => {
    for (const app of [receivers, cliApp]) {
      const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { resolved?: string; link?: boolean }>;
      };
      const ours = Object.entries(lock.packages).filter(([path]) => path.includes('node_modules/@jobhook/'));
      expect(ours.length).toBeGreaterThan(0);
      for (const [path, entry] of ours) {
        expect({ path, link: entry.link, resolved: entry.resolved }).toEqual({
          path,
          link: undefined,
          resolved: expect.stringMatching(/^file:\.\.\/packs\/jobhook-[a-z]+-[\d.]+\.tgz$/),
        });
      }
    }
  });
});

describe.each(FRAMEWORK_NAMES)('the %s quickstart from the README', (framework) => {
  it.each(FORMATS)('runs as written as %s: a delivery handled once, its duplicate 200 duplicate:true, a fail handled', async (format) => {
    const { code, where } = quickstart(framework, format);
    if (format === 'cjs') expect(code, `${where}: the CommonJS form uses require()`).toMatch(/\brequire\(/);
    else expect(code, `${where}: the ESM form uses import`).toMatch(/^import /m);
    const file = `${framework}-quickstart.${format === 'esm' ? 'mjs' : 'cjs'}`;
    writeFileSync(join(receivers, file), code);
    const { success, fail } = signed.deliveries[`${framework}:${format}`]!;

    // The success delivery twice (as a sender retrying after a lost answer would), then the fail event.
    const { answers, reports } = await deliverTo(file, [success, success, fail]);

    expect(answers).toEqual([
      { status: 200, body: { ok: true, job_id: success.jobId, duplicate: false } },
      { status: 200, body: { ok: true, job_id: success.jobId, duplicate: true } },
      { status: 200, body: { ok: true, job_id: fail.jobId, duplicate: false } },
    ]);
    // One handler call per job (the duplicate reached none), with what the event carried; a quickstart
    // handles both statuses with onEvent (handleJob) or with onSuccess and onFail.
    const byOnEvent = [
      { call: 'handleJob', jobId: success.jobId, status: 'success' },
      { call: 'handleJob', jobId: fail.jobId, status: 'fail' },
    ];
    const byStatus = [
      { call: 'saveResult', jobId: success.jobId, output: success.event.output },
      { call: 'markFailed', jobId: fail.jobId, message: fail.event.error!.message },
    ];
    expect(reports).toEqual(reports[0]?.call === 'handleJob' ? byOnEvent : byStatus);
  });
});

describe('@jobhook/cli installed alone', () => {
  const jobhook = (args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    run(process.execPath, [join(cliApp, 'node_modules/.bin/jobhook'), ...args], { cwd: cliApp }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        code: err.code ?? -1,
        stdout: err.stdout ?? '',
        stderr: err.stderr ?? '',
      }),
    );

  it('brings fewer than 15 packages, none of the reference service', async () => {
    const paths = (await npm(cliApp, ['ls', '--all', '--parseable'])).trim().split('\n').slice(1);
    // …/node_modules/a/node_modules/@scope/b → @scope/b
    const names = paths.map((path) => relative(join(cliApp, 'node_modules'), path).split('node_modules/').at(-1)!);
    expect(names.length, names.join(', ')).toBeLessThan(15);
    expect(names).toContain('@jobhook/cli');
    expect(names.filter((name) => SERVICE_PACKAGES.includes(name))).toEqual([]);
  });

  it('lists every command; keygen, sign, verify and doctor work without the reference service', async () => {
    const help = await jobhook(['--help']);
    expect(help.code, help.stderr).toBe(0);
    for (const command of ['verify', 'doctor', 'canonicalize', 'sign', 'keygen', 'send', 'serve']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }

    expect((await jobhook(['keygen', '--out', 'keys', '--bits', '2048'])).code).toBe(0);
    const body = JSON.stringify({ event: 'async_job_completed', job_id: 'job-1', status: 'success', output: { pages: 1 } });
    writeFileSync(join(cliApp, 'body.json'), body);
    const sign = await jobhook(['sign', '--private-key', 'keys/service-private.pem', 'body.json']);
    expect(sign.code, sign.stderr).toBe(0);
    const verify = await jobhook([
      'verify',
      '--public-key',
      'keys/service-public.pem',
      '--signature',
      sign.stdout.trim(),
      '--body',
      'body.json',
    ]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, job_id: 'job-1' });

    const headers = { 'x-service-signature': sign.stdout.trim() };
    const request = { method: 'POST', headers, body_b64: Buffer.from(body).toString('base64') };
    writeFileSync(join(cliApp, 'request.json'), JSON.stringify(request));
    const doctor = await jobhook(['doctor', '--public-key', 'keys/service-public.pem', '--request', 'request.json', '--json']);
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(JSON.parse(doctor.stdout)).toMatchObject({ verified: true, cause: 'verified' });
  });

  it('serve exits 2 with ERR_PACKAGE_MISSING and the install line for @jobhook/sender', async () => {
    const serve = await jobhook(['serve', '--port', '0']);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/^jobhook serve: ERR_PACKAGE_MISSING: .*npm i @jobhook\/sender$/m);
  });
});
