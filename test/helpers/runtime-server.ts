/**
 * A server process of a runtime test (Bun, Deno, workerd, `next start`): spawned in a process group
 * of its own, so stopping it stops what it started too; its port is read from what it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';

export interface RuntimeServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Everything it wrote to stdout so far. */
  stdout(): string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** SIGKILLs its process group; safe to call twice. */
  stop(): void;
}

export interface RuntimeServerOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Reads the port from one line of the stream the server announces it on; `undefined` for
   * other lines.
   */
  readonly port: (line: string) => number | undefined;
  /** The stream that announces the port: stdout (default) or an extra pipe at fd 3 (workerd's `--control-fd=3`). */
  readonly announcedOn?: 'stdout' | 'fd3';
}

/** Starts the server and resolves once it announced its port; rejects, with its stderr, when it exits first. */
export async function startRuntimeServer(options: RuntimeServerOptions): Promise<RuntimeServer> {
  const child: ChildProcess = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', ...(options.announcedOn === 'fd3' ? (['pipe'] as const) : [])],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const stop = (): void => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const announcer = (options.announcedOn === 'fd3' ? child.stdio[3] : child.stdout) as Readable;
  const port = await new Promise<number>((resolvePort, reject) => {
    createInterface({ input: announcer }).on('line', (line) => {
      const found = options.port(line);
      if (found !== undefined) resolvePort(found);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      reject(
        new Error(`${options.command} ${options.args.join(' ')} exited (${String(code ?? signal)}) before listening:\n${stderr}${stdout}`),
      ),
    );
  }).catch((err: unknown) => {
    stop();
    throw err;
  });
  return { url: `http://127.0.0.1:${port}`, stdout: () => stdout, stderr: () => stderr, stop };
}
