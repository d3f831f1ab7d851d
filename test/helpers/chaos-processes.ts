// Child processes of the chaos suite (receivers, the sender): spawned with `node`, read line by line,
// signalled (SIGSTOP, SIGCONT, SIGKILL), and never left behind: `stopAllChildren()` in afterAll, and
// a process exit hook as the last resort.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { killOnExit } from '../../packages/core/test/helpers/kill-on-exit.js';

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
const KEPT_OUTPUT_CHARS = 8_000;

/** One running child. */
export interface ManagedChild {
  readonly name: string;
  readonly pid: number;
  /** False once the process has exited. */
  readonly running: boolean;
  /** The end of its stdout and stderr, for failure messages. */
  output(): string;
  /** Sends a signal (SIGSTOP, SIGCONT, …) if it is still running. */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (and SIGCONT, in case it is stopped), SIGKILL after 5 s; waits for the exit. */
  stop(): Promise<void>;
  /** Resolves on exit. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** How to start a child. */
export interface SpawnOptions {
  name: string;
  /** Arguments of `node` (the script first). */
  args: readonly string[];
  cwd: string;
  env?: Record<string, string>;
  /** A stdout or stderr line that says the child is ready; its match is returned. */
  ready: RegExp;
  readyTimeoutMs?: number;
  /** Every complete line of stdout and stderr. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

const children = new Set<ChildProcessWithoutNullStreams>();

/** Pids of the children started here that are still running. */
export function runningChildPids(): number[] {
  return [...children].map((c) => c.pid).filter((pid): pid is number => pid !== undefined);
}

/** Starts `node …args` and resolves once a line matches `ready`; rejects (and kills it) when it exits or times out first. */
export async function spawnNode(options: SpawnOptions): Promise<{ child: ManagedChild; ready: RegExpExecArray }> {
  const proc = spawn(process.execPath, [...options.args], {
    cwd: options.cwd,
    // A developer's own database is never touched: DATABASE_URL only when the test gives it.
    env: { ...process.env, DATABASE_URL: undefined, JOBHOOK_STORE: undefined, HANDLER_DELAY_MS: undefined, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(proc);
  killOnExit(proc);
  let kept = '';
  let running = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      running = false;
      children.delete(proc);
      resolve({ code, signal });
    });
  });
  let onReady: ((m: RegExpExecArray) => void) | undefined;
  const readLines = (stream: 'stdout' | 'stderr') => {
    let partial = '';
    return (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      kept = (kept + text).slice(-KEPT_OUTPUT_CHARS);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (onReady !== undefined) {
          const match = options.ready.exec(line);
          if (match !== null) onReady(match);
        }
        options.onLine?.(line, stream);
      }
    };
  };
  proc.stdout.on('data', readLines('stdout'));
  proc.stderr.on('data', readLines('stderr'));

  const child: ManagedChild = {
    name: options.name,
    pid: proc.pid ?? -1,
    get running() {
      return running;
    },
    output: () => kept,
    signal(signal) {
      if (running) proc.kill(signal);
    },
    async kill() {
      if (running) proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!running) return;
      proc.kill('SIGCONT');
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
    exited,
  };

  const timeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  try {
    const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${options.name} was not ready within ${timeoutMs} ms:\n${kept}`)), timeoutMs);
      onReady = (match) => {
        clearTimeout(timer);
        onReady = undefined;
        resolve(match);
      };
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`${options.name} exited (${signal ?? `code ${code}`}) before it was ready:\n${kept}`));
      });
    });
    return { child, ready };
  } catch (err) {
    await child.kill();
    throw err;
  }
}

/** Stops every child still running (SIGTERM, then SIGKILL). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all(
    [...children].map(async (proc) => {
      proc.kill('SIGCONT');
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) resolve();
        else proc.once('exit', () => resolve());
      });
      clearTimeout(timer);
      children.delete(proc);
    }),
  );
}
