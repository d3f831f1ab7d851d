/**
 * The runtime test workspace, test/runtimes: Bun, Deno, workerd, esbuild and Next.js from npm, with
 * `@jobhook/core` linked to packages/core (`file:`), so every runtime runs the build the other tests
 * test. It weighs about 700 MB and its packages run install scripts, so the root `npm ci` never
 * installs it (it is not a root workspace): the first test that needs it runs `npm ci` against its
 * own lockfile into test/runtimes/node_modules (gitignored), and again whenever package.json or
 * package-lock.json change (a stamp file holds their hash). A failed install or a missing binary
 * throws, naming the command to run by hand: the tests fail, never skip.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { npmEnv } from './npm-env.js';
import { writeToTerminal } from './quiet-output.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** test/runtimes: the workspace's package.json, package-lock.json and the apps the tests serve. */
export const RUNTIMES_DIR = join(REPO, 'test/runtimes');
const MODULES = join(RUNTIMES_DIR, 'node_modules');
const STAMP = join(MODULES, '.jobhook-install-stamp');
/** Held (a directory, made atomically) while one test process installs; holds the holder's pid. */
const LOCK = join(RUNTIMES_DIR, '.install-lock');
/** The binaries the tests run, from node_modules/.bin. */
export const RUNTIME_BINARIES = ['bun', 'deno', 'workerd', 'esbuild', 'next'] as const;
export type RuntimeBinary = (typeof RUNTIME_BINARIES)[number];

/** A hang guard for a first-use install (`npm ci` of ~700 MB), not a speed check. */
export const INSTALL_TIMEOUT_MS = 15 * 60_000;

export interface RuntimesWorkspace {
  readonly dir: string;
  /** The path of one of {@link RUNTIME_BINARIES}. */
  bin(name: RuntimeBinary): string;
}

const HOW_TO = 'run it by hand to see why: cd test/runtimes && npm ci';

function lockfileHash(): string {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) hash.update(readFileSync(join(RUNTIMES_DIR, file)));
  return hash.digest('hex');
}

function installed(hash: string): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the install lock, waiting while another live process holds it; a dead holder's lock is taken over. */
async function lock(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number.parseInt(readFileSync(join(LOCK, 'pid'), { encoding: 'utf8', flag: 'a+' }), 10);
    // No pid a minute after the lock was made: its maker died between the two steps.
    const orphaned = Number.isInteger(holder) ? !alive(holder) : Date.now() - statSync(LOCK).mtimeMs > 60_000;
    if (orphaned) rmSync(LOCK, { recursive: true, force: true });
    else await sleep(500);
  }
}

/**
 * Installs the workspace when its stamp is missing or stale (`npm ci`, one process at a time) and
 * checks its binaries. Throws when packages/core is not built, the install fails or a binary is missing.
 * @returns the workspace, and `installedMs`: how long this call's install took (undefined when none ran).
 */
export async function ensureRuntimesWorkspace(): Promise<RuntimesWorkspace & { installedMs?: number }> {
  const core = join(REPO, 'packages/core/dist/index.js');
  if (!existsSync(core)) throw new Error(`${core} is missing: build first (npx tsc -b)`);
  const hash = lockfileHash();
  let installedMs: number | undefined;
  if (!installed(hash)) {
    const unlock = await lock();
    try {
      if (!installed(hash)) {
        writeToTerminal('runtime tests: installing test/runtimes (npm ci, about 700 MB; first use only) ...\n');
        const started = performance.now();
        try {
          await promisify(execFile)('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
            cwd: RUNTIMES_DIR,
            env: npmEnv(),
            maxBuffer: 64 * 1024 * 1024,
          });
        } catch (err) {
          const { stderr, message } = err as Error & { stderr?: string };
          throw new Error(`runtime tests: npm ci in test/runtimes failed (${HOW_TO}):\n${(stderr ?? message).slice(-4000)}`);
        }
        installedMs = performance.now() - started;
        writeFileSync(STAMP, hash);
        writeToTerminal(`runtime tests: installed test/runtimes in ${(installedMs / 1000).toFixed(1)} s\n`);
      }
    } finally {
      unlock();
    }
  }
  const bin = (name: RuntimeBinary): string => join(MODULES, '.bin', name);
  for (const name of RUNTIME_BINARIES) {
    if (!existsSync(bin(name))) throw new Error(`runtime tests: ${bin(name)} is missing: reinstall with cd test/runtimes && npm ci`);
  }
  return { dir: RUNTIMES_DIR, bin, ...(installedMs === undefined ? {} : { installedMs }) };
}
