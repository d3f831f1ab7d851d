// Running the guides' code as pasted: the code block after a `<!-- <marker> -->` line, the block with
// only what a reader would change (ports, keys from a banner) replaced, and bash processes that run
// such blocks in a folder of the repository, in process groups of their own so that what they start
// in the background goes down with them.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { waitUntil } from './e2e-wait.js';

/**
 * The code block right after the line `<!-- <marker> -->` in `file`; exactly one must exist.
 *
 * @example
 * ```ts
 * const code = guideBlock('docs/trust.md', 'guide:trust:receiver');
 * ```
 */
export function guideBlock(file: string, marker: string): string {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(new RegExp(`^<!-- ${marker} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))];
  expect(found.length, `one <!-- ${marker} --> block in ${file}`).toBe(1);
  return found[0]![1]!;
}

/**
 * `text` with each [from, to] replaced everywhere (a RegExp keeps its flags); a `from` the text lacks
 * fails the test: the guide moved on, and the test must follow.
 */
export function substitute(text: string, pairs: readonly (readonly [string | RegExp, string])[]): string {
  let out = text;
  for (const [from, to] of pairs) {
    const found = typeof from === 'string' ? out.includes(from) : new RegExp(from.source, from.flags.replace('g', '')).test(out);
    expect(found, `the guide's block holds ${String(from)}`).toBe(true);
    out = typeof from === 'string' ? out.split(from).join(to) : out.replace(new RegExp(from.source, `${from.flags.replace('g', '')}g`), to);
  }
  return out;
}

/** A bash process of {@link createShells}, with what it printed so far. */
export interface Shell {
  child: ChildProcess;
  out: string;
  err: string;
  exited: boolean;
}

/** Bash processes started with `start`, stopped (with everything they started) by `stop`. */
export interface Shells {
  start(script: string, cwd: string, env?: NodeJS.ProcessEnv): Shell;
  stop(): Promise<void>;
}

/**
 * A set of bash processes, each in a process group of its own; `stop()` sends SIGTERM to every group
 * and waits for the shells to exit. The groups are also stopped if the test process exits first.
 *
 * @example
 * ```ts
 * const shells = createShells();
 * const sh = shells.start('npx jobhook serve --port 0', work);
 * await shells.stop();
 * ```
 */
export function createShells(): Shells {
  const all: Shell[] = [];
  const kill = (): void => {
    for (const sh of all) {
      try {
        if (sh.child.pid !== undefined) process.kill(-sh.child.pid, 'SIGTERM');
      } catch {
        // the group is gone already
      }
    }
  };
  process.once('exit', kill);
  return {
    start(script, cwd, env = {}) {
      const child = spawn('bash', ['-c', script], { cwd, detached: true, env: { ...process.env, ...env } });
      const sh: Shell = { child, out: '', err: '', exited: false };
      child.stdout!.on('data', (chunk: Buffer) => (sh.out += chunk.toString('utf8')));
      child.stderr!.on('data', (chunk: Buffer) => (sh.err += chunk.toString('utf8')));
      child.once('exit', () => (sh.exited = true));
      all.push(sh);
      return sh;
    },
    async stop() {
      kill();
      await Promise.all(all.filter((sh) => !sh.exited).map((sh) => new Promise((resolve) => sh.child.once('exit', resolve))));
      process.removeListener('exit', kill);
    },
  };
}

/**
 * Waits until `jobhook serve`, run by `sh`, has printed its whole banner, and returns its fields
 * (`inference key`, `other org key`, `public key`, …) by name.
 *
 * @example
 * ```ts
 * const banner = await serveBanner(sh, 30_000);
 * const key = banner('inference key');
 * ```
 */
export async function serveBanner(sh: Shell, timeoutMs: number): Promise<(name: string) => string> {
  const banner = await waitUntil(
    () => {
      if (sh.out.includes('Stop with')) return sh.out;
      if (sh.exited) throw new Error(`jobhook serve exited before its banner:\n${sh.out}\n${sh.err}`);
      return undefined;
    },
    { timeoutMs, what: () => `the service's banner; so far:\n${sh.out}\n${sh.err}` },
  );
  return (name) => {
    const value = new RegExp(`${name}:\\s+(\\S+)`).exec(banner)?.[1];
    if (value === undefined) throw new Error(`no '${name}' in the banner:\n${banner}`);
    return value;
  };
}
