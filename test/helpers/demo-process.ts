/**
 * `node examples/demo/demo.mjs` as the e2e tests run it: over the built packages, in a process
 * group of its own, so a test can check that nothing it started is left behind and kill what is.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The demo script. */
const DEMO = resolve(REPO, 'examples/demo/demo.mjs');
/** The built entry points the demo imports. */
const BUILT = ['core', 'fastify', 'sender', 'client'].map((name) => resolve(REPO, `packages/${name}/dist/index.js`));
const groups: number[] = [];

/** Throws, naming the file, when the demo or a package it imports is not built. */
export function assertDemoBuilt(): void {
  for (const file of [...BUILT, DEMO]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: build first (npx tsc -b)`);
  }
}

/** True while any process of the group exists (signal 0 only checks). */
export function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Starts the demo with `args`, detached (its own process group, so checks see the receiver child
 * too), NO_COLOR set; `group` is the group's id, remembered for {@link killDemoGroups}.
 */
export function spawnDemo(args: readonly string[] = []): { child: ChildProcessWithoutNullStreams; group: number } {
  const child = spawn(process.execPath, [DEMO, ...args], {
    cwd: REPO,
    detached: true,
    env: { ...process.env, NO_COLOR: '1' },
  });
  const group = child.pid;
  if (group === undefined) throw new Error('the demo did not start');
  groups.push(group);
  return { child, group };
}

/** Kills every demo group still alive (for afterAll: a failed run must not leave its receiver behind). */
export function killDemoGroups(): void {
  for (const group of groups.splice(0)) {
    if (groupAlive(group)) process.kill(-group, 'SIGKILL');
  }
}
