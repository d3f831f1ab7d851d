// Handlers for the work queue tests that record what ran, when, and how many ran at once.
import type { Logger } from '@jobhook/core';
import type { AttemptRecord, DeliveryTask } from '../../src/delivery-types.js';
import type { WorkHandlers } from '../../src/queue/work-queue.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `jobId/round/attempt`, the name of one delivery attempt in these tests. */
export const taskKey = (t: DeliveryTask): string => `${t.jobId}/${t.round}/${t.attempt}`;

/** Polls `predicate` every 5 ms; throws with `what` when it is still false after `timeoutMs`. */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await predicate())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

export interface Run {
  /** A job id for runJob, `jobId/round/attempt` for deliver. */
  id: string;
  startedAt: number;
  finishedAt?: number;
}

export interface Harness {
  handlers: WorkHandlers;
  jobRuns: Run[];
  deliveryRuns: Run[];
  /** Most deliver handlers running at the same time. */
  maxRunning(): number;
  /** Runs (started) of one id. */
  count(id: string): number;
}

/** What a handler does for `id` once recorded: wait, throw... (default: return at once). */
export type Behaviour = (kind: 'job' | 'delivery', id: string) => Promise<void> | void;

export function createHarness(behave: Behaviour = () => {}): Harness {
  const jobRuns: Run[] = [];
  const deliveryRuns: Run[] = [];
  let running = 0;
  let max = 0;
  return {
    jobRuns,
    deliveryRuns,
    maxRunning: () => max,
    count: (id) => jobRuns.filter((r) => r.id === id).length + deliveryRuns.filter((r) => r.id === id).length,
    handlers: {
      async runJob(jobId) {
        const run: Run = { id: jobId, startedAt: performance.now() };
        jobRuns.push(run);
        try {
          await behave('job', jobId);
        } finally {
          run.finishedAt = performance.now();
        }
      },
      async deliver(task) {
        const run: Run = { id: taskKey(task), startedAt: performance.now() };
        deliveryRuns.push(run);
        running++;
        max = Math.max(max, running);
        try {
          await behave('delivery', run.id);
        } finally {
          running--;
          run.finishedAt = performance.now();
        }
        return attemptRecord(task);
      },
    },
  };
}

export function attemptRecord(task: DeliveryTask): AttemptRecord {
  return {
    round: task.round,
    attempt: task.attempt,
    startedAt: new Date().toISOString(),
    durationMs: 1,
    url: 'https://receiver.test/hook',
    address: '127.0.0.1',
    statusCode: 200,
    error: null,
    errorMessage: null,
    outcome: 'delivered',
    nextDelayMs: null,
  };
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg: string | undefined;
}

/** A pino-shaped logger that keeps what it is given. */
export function createCapturingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object, msg?: string) => {
    lines.push({ level, obj, msg });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A promise with its resolve function, to hold a handler until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
