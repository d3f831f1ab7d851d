// The `availability` group's child processes and temp dirs: every child started through here is
// tracked and ended when the bench ends, fails, or is stopped (SIGINT/SIGTERM/SIGHUP), and its temp
// dirs removed; the children themselves exit
// when their IPC channel to this process closes (avail-guard.mjs for `jobhook serve`), so none
// outlives a parent that was killed outright.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const live = new Set();
let handlersInstalled = false;

const dirs = new Set();

/**
 * Ends every tracked child at once and removes the tracked temp dirs: the last resort on exit and on
 * a signal. SIGTERM, not SIGKILL: the receiver and the attacker die of it, and avail-guard.mjs must
 * live long enough to end `jobhook serve` (a killed guard would leave it running).
 */
export function killAll() {
  for (const child of live) {
    try {
      child.kill('SIGTERM');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

/** A new temp dir, removed by {@link removeTempDir} or, failing that, by {@link killAll}. */
export function makeTempDir(prefix) {
  installHandlers();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

function installHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** `fork(module, args, options)` with an IPC channel, tracked until it exits. */
export function forkTracked(modulePath, args, options = {}) {
  installHandlers();
  const child = fork(modulePath, args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export async function stopChild(child, graceMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), delay(graceMs).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** The next IPC message of `child` for which `match(message)` is true; rejects on exit or after `timeoutMs`. */
export function nextMessage(child, match, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${what}: no answer in ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message) => {
      if (message?.type === 'error') finish(new Error(`${what}: ${message.message}`));
      else if (match(message)) finish(null, message);
    };
    const onExit = (code, signal) => finish(new Error(`${what}: the child exited (${signal ?? code}) first`));
    function finish(err, value) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(value);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Keeps the last `max` characters a child wrote on `stream`, for an error message. */
export function tail(stream, max = 4000) {
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    text = (text + chunk).slice(-max);
  });
  return () => text;
}
