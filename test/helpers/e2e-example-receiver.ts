// Runs one of the example receiver apps (examples/<framework>-receiver/server.mjs) as a child process,
// exactly as a user starts it (`node server.mjs` with env), and reads what it handled from its stdout:
// one JSON line with "msg":"job handled" per job its handler ran for.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The example apps, one per framework adapter. */
export type ExampleFramework = 'express' | 'koa' | 'fastify';

/** Every example app. */
export const EXAMPLE_FRAMEWORKS: readonly ExampleFramework[] = ['express', 'koa', 'fastify'];

/** One `"msg":"job handled"` line. */
export interface HandledJob {
  jobId: string;
  status: string;
}

/** Options of {@link startExampleReceiver}. */
export interface ExampleReceiverOptions {
  framework: ExampleFramework;
  /** PEM file of the sender's public key (`JOBHOOK_PUBLIC_KEY`). */
  publicKeyPath: string;
  /** `PORT`. Default 0: the kernel picks a free port, read back from the app's "listening" line. */
  port?: number;
  /** Extra environment (e.g. `WEBHOOK_PATH`). `REDIS_URL` is never inherited: the app uses its memory store unless given here. */
  env?: Readonly<Record<string, string>>;
  /** Longest wait for the "listening" line. Default 20000 (a loaded machine starts node slowly). */
  startTimeoutMs?: number;
}

/** A running example app. */
export interface ExampleReceiver {
  readonly framework: ExampleFramework;
  /** The app's process id (for /proc/<pid>/status). */
  readonly pid: number;
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  /** `baseUrl` + the webhook path the app logged. */
  readonly webhookUrl: string;
  /** Every handled job, in log order (a job handled twice appears twice). */
  readonly handled: readonly HandledJob[];
  /** Times `jobId` was handled by this process. */
  handledCount(jobId: string): number;
  /** Resolves once every id was handled at least once; throws after `timeoutMs`. */
  waitForHandled(jobIds: Iterable<string>, timeoutMs: number): Promise<void>;
  /** Everything the app wrote (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGTERM, then waits until the process exited and its output is read; returns the exit code. SIGKILL after 10 s. Idempotent. */
  stop(): Promise<number | null>;
}

const STOP_KILL_AFTER_MS = 10_000;

function exampleDir(framework: ExampleFramework): string {
  return fileURLToPath(new URL(`../../examples/${framework}-receiver/`, import.meta.url));
}

function childEnv(options: ExampleReceiverOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The apps must run as a user runs them: plain node on the built packages, memory store.
  delete env['REDIS_URL'];
  delete env['DATABASE_URL'];
  delete env['JOBHOOK_STORE'];
  delete env['HANDLER_DELAY_MS'];
  delete env['NODE_OPTIONS'];
  delete env['WEBHOOK_PATH'];
  delete env['JOBHOOK_RECIPIENT_SECRET'];
  delete env['JOBHOOK_RECIPIENT_URL'];
  delete env['JOBHOOK_RECIPIENT_CHECK'];
  delete env['JOBHOOK_RECORD_DIR'];
  return {
    ...env,
    PORT: String(options.port ?? 0),
    // Only the Fastify app reads HOST (its default 0.0.0.0); the others listen on every address anyway.
    HOST: '127.0.0.1',
    JOBHOOK_PUBLIC_KEY: options.publicKeyPath,
    ...options.env,
  };
}

/**
 * Starts `examples/<framework>-receiver/server.mjs` with `node` (the built packages: run `npx tsc -b`
 * first) and resolves once it logged that it listens.
 *
 * @example
 * ```ts
 * const receiver = await startExampleReceiver({ framework: 'koa', publicKeyPath });
 * // ... submit jobs with webhook_receiver: receiver.webhookUrl
 * await receiver.waitForHandled([jobId], 10_000);
 * expect(await receiver.stop()).toBe(0);
 * ```
 * @throws Error when the app exits or stays silent before listening (with its output).
 */
export async function startExampleReceiver(options: ExampleReceiverOptions): Promise<ExampleReceiver> {
  const { framework, startTimeoutMs = 20_000 } = options;
  const child: ChildProcess = spawn(process.execPath, ['server.mjs'], {
    cwd: exampleDir(framework),
    env: childEnv(options),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const handled: HandledJob[] = [];
  const counts = new Map<string, number>();
  const onHandled = new Set<() => void>();
  let listening: { port: number; path: string } | undefined;
  let onListening: (() => void) | undefined;

  // 'close' comes after 'exit' once stdout and stderr are drained: every line has been read then.
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  createInterface({ input: child.stderr! }).on('line', (line) => lines.push(`[stderr] ${line}`));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof entry !== 'object' || entry === null) return;
    const fields = entry as Record<string, unknown>;
    if (fields['msg'] === 'listening' && typeof fields['port'] === 'number') {
      listening = { port: fields['port'], path: typeof fields['path'] === 'string' ? fields['path'] : '/webhooks/jobs' };
      onListening?.();
    } else if (fields['msg'] === 'job handled' && typeof fields['job_id'] === 'string') {
      handled.push({ jobId: fields['job_id'], status: String(fields['status']) });
      counts.set(fields['job_id'], (counts.get(fields['job_id']) ?? 0) + 1);
      for (const wake of onHandled) wake();
    }
  });
  const output = (): string => lines.join('\n');

  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${framework} receiver did not listen within ${startTimeoutMs} ms:\n${output()}`)),
        startTimeoutMs,
      );
      onListening = () => {
        clearTimeout(timer);
        resolve();
      };
      void closed.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${framework} receiver exited (code ${String(code)}) before listening:\n${output()}`));
      });
      if (listening !== undefined) onListening();
    });
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await closed;
    throw err;
  }
  const { port, path } = listening!;
  try {
    // Ready means answering HTTP, as an orchestrator's probe sees it. It also means the event loop
    // has turned since the "listening" line: an app that registers its SIGTERM handler after logging
    // (the Fastify example does) would otherwise die of a SIGTERM sent right away, with no exit code.
    await waitForHealth(`http://127.0.0.1:${port}/healthz`, startTimeoutMs, closed);
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await closed;
    throw new Error(`${framework} receiver: ${(err as Error).message}:\n${output()}`);
  }

  let stopping: Promise<number | null> | undefined;
  return {
    framework,
    pid: child.pid!,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    webhookUrl: `http://127.0.0.1:${port}${path}`,
    handled,
    handledCount: (jobId) => counts.get(jobId) ?? 0,
    output,
    async waitForHandled(jobIds, timeoutMs) {
      const wanted = [...jobIds];
      const missing = (): string[] => wanted.filter((id) => !counts.has(id));
      if (missing().length === 0) return;
      await new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (missing().length > 0) return;
          done();
          resolve();
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `${framework} receiver: ${missing().length} of ${wanted.length} jobs not handled within ${timeoutMs} ms (${missing().join(', ')}):\n${output()}`,
            ),
          );
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          onHandled.delete(check);
        };
        onHandled.add(check);
      });
    },
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const kill = setTimeout(() => child.kill('SIGKILL'), STOP_KILL_AFTER_MS);
          try {
            return await closed;
          } finally {
            clearTimeout(kill);
          }
        }
        return closed;
      })();
      return stopping;
    },
  };
}

async function waitForHealth(url: string, timeoutMs: number, exited: Promise<unknown>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // Not answering yet.
    }
    if (gone) throw new Error(`exited before ${url} answered`);
    if (Date.now() >= deadline) throw new Error(`${url} did not answer 2xx within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
