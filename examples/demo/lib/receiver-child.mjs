// Runs the Fastify example receiver (examples/fastify-receiver/server.mjs) as a child process, as a
// user would run it, and reads its JSON log lines: the demo shows what the receiver itself reports.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Spawns the receiver on a free port of 127.0.0.1 (PORT=0; the port is read from its "listening"
 * line, so there is no race for a port) with its own memory idempotency store.
 *
 * LOG_LEVEL=info makes the app's logger, which it hands to @jobhook/fastify, print the pipeline's
 * outcome line per request (`"msg":"jobhook: webhook handled"`, with the matched `profile`), besides
 * the app's own `"msg":"job handled"` line.
 *
 * `recipientSecret` becomes JOBHOOK_RECIPIENT_SECRET: the app then handles only jobs tagged with it.
 *
 * @param {{ serverPath: string, publicKeyPath: string, recipientSecret?: string, startTimeoutMs?: number }} options
 */
export function startReceiverChild({ serverPath, publicKeyPath, recipientSecret, startTimeoutMs = 15_000 }) {
  const env = { ...process.env, PORT: '0', HOST: '127.0.0.1', JOBHOOK_PUBLIC_KEY: publicKeyPath, LOG_LEVEL: 'info' };
  delete env.JOBHOOK_RECIPIENT_SECRET;
  delete env.JOBHOOK_RECIPIENT_URL;
  delete env.JOBHOOK_RECIPIENT_CHECK;
  if (recipientSecret !== undefined) env.JOBHOOK_RECIPIENT_SECRET = recipientSecret;
  // One process, memory store, default path: whatever the caller's shell exports.
  delete env.REDIS_URL;
  delete env.DATABASE_URL;
  delete env.JOBHOOK_STORE;
  delete env.WEBHOOK_PATH;
  const child = spawn(process.execPath, [serverPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });

  /** @type {Record<string, any>[]} */
  const lines = [];
  const waiters = new Set();
  let stderr = '';
  let exit = null;
  let spawnError = null;

  const exited = new Promise((resolve) => {
    child.once('error', (err) => {
      spawnError = err;
      exit ??= { code: null, signal: null };
      resolve(exit);
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  exited.then(() => {
    for (const w of [...waiters]) w.fail(new Error(`the receiver exited (${describeExit()}) before it logged ${w.what}${stderrTail()}`));
  });

  createInterface({ input: child.stdout }).on('line', (text) => {
    let entry;
    try {
      entry = JSON.parse(text);
    } catch {
      entry = { msg: text };
    }
    lines.push(entry);
    for (const w of [...waiters]) if (w.match(entry)) w.done(entry);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
  });

  function describeExit() {
    if (spawnError !== null) return spawnError.message;
    return exit?.signal ? `signal ${exit.signal}` : `exit code ${exit?.code}`;
  }

  function stderrTail() {
    const lines = stderr.trim().split('\n');
    // Node prints the error's name and message on one line; show it, else the last lines.
    const error = lines.find((line) => /^\w*Error\b/.test(line.trim()));
    const tail = error ?? lines.slice(-5).join('\n');
    return tail === '' ? '' : `; its stderr: ${tail}`;
  }

  /**
   * The first log line (already read or to come) that `match` accepts.
   * @param {(entry: Record<string, any>) => boolean} match
   * @param {string} what for the error message
   */
  function waitFor(match, what, timeoutMs = 10_000) {
    const found = lines.find(match);
    if (found !== undefined) return Promise.resolve(found);
    if (exit !== null) return Promise.reject(new Error(`the receiver exited (${describeExit()}) before it logged ${what}${stderrTail()}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`the receiver did not log ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = {
        match,
        what,
        done(entry) {
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(entry);
        },
        fail(err) {
          clearTimeout(timer);
          waiters.delete(waiter);
          reject(err);
        },
      };
      waiters.add(waiter);
    });
  }

  // Registered by the caller before the child is up, so it can be stopped from the first moment.
  const ready = waitFor((e) => e.msg === 'listening', 'its "listening" line', startTimeoutMs).then(
    (listening) => ({ url: `http://127.0.0.1:${listening.port}${listening.path}` }),
    (err) => {
      killNow();
      throw err;
    },
  );

  /**
   * SIGTERM (the app closes and exits 0), SIGKILL after `graceMs`. Resolves with how it exited and
   * whether it was still running (`signalled`).
   */
  async function stop(graceMs = 5000) {
    const signalled = exit === null;
    if (signalled) {
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(force);
    }
    return { ...exit, signalled };
  }

  /** Synchronous last resort for `process.on('exit')`. */
  function killNow() {
    if (exit === null && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  return {
    pid: child.pid,
    /** Resolves with `{ url }` (the webhook URL) once it listens; rejects if it exits or times out first. */
    ready,
    lines,
    waitFor,
    stop,
    killNow,
  };
}
