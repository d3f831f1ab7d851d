import { checkJobId, MAX_TIMER_MS, optionError } from '@jobhook/core/internal';
import type { DeliveryTask } from '../delivery-types.js';
import { DueHeap, type DueEntry } from './due-heap.js';
import { Fifo } from './fifo.js';
import { abandonWork } from './abandon-work.js';
import { resolveMemoryWorkQueueOptions, type MemoryWorkQueueOptions } from '../options/memory-work-queue-options.js';
import { checkDelay, checkHandlers, checkTask } from '../options/work-queue-arguments.js';
import type { WorkHandlers, WorkQueue, WorkQueueCounts } from './work-queue.js';

export type { MemoryWorkQueueOptions } from '../options/memory-work-queue-options.js';

/** Queued work: a job id (`runJob`) or a delivery task, with its dedupe key. Kept this small on purpose. */
interface Entry extends DueEntry {
  key: string;
  work: string | DeliveryTask;
}

const WHERE = 'createMemoryWorkQueue';

const deliveryKey = (t: DeliveryTask): string => `${t.jobId}\n${t.round}\n${t.attempt}`;

/**
 * The in-process work queue, the default: nothing survives a restart, one process does all the work.
 *
 * - Delays: every delayed entry sits in one min-heap under a single timer armed for the earliest
 *   due time (not a timer per entry), so 100,000 queued retries cost one small object each. The
 *   timer is NOT unref'd: pending work keeps the process alive; {@link WorkQueue.close} clears it.
 *   Work never runs before its delay (an early timer is re-armed for the rest).
 * - Concurrency: at most `concurrency` `deliver` handlers run at once, the rest wait in FIFO order of
 *   becoming due. `runJob` handlers are NOT limited: finishing a job is (in the reference sender) a store write and
 *   an enqueue, and making it wait behind slow webhook receivers would delay every job's result.
 * - Dedupe: a job id, or a `(jobId, round, attempt)` delivery, that is queued or running is not
 *   queued again; once its handler settled, it can be queued again.
 * - A handler that throws or rejects is logged (`logger.error`), not run again, and handed to
 *   `handlers.abandoned` (when given); the queue goes on.
 * - After `close()`, enqueueing is a no-op (the memory queue drops queued work on close anyway), so a
 *   handler still running during close may enqueue its retry without failing.
 *
 * @throws JobhookError `ERR_OPTION_INVALID` for a bad option, and from `scheduleJob`/`enqueueDelivery`
 * for a bad job id, task or delay.
 * @example
 * ```ts
 * const queue = createMemoryWorkQueue({ concurrency: 32 });
 * await queue.start({ runJob, deliver });
 * await queue.enqueueDelivery({ jobId, round: 0, attempt: 1 });
 * ```
 */
export function createMemoryWorkQueue(options: MemoryWorkQueueOptions = {}): WorkQueue {
  const { concurrency, logger } = resolveMemoryWorkQueueOptions(options);
  const now = (): number => performance.now();

  const jobKeys = new Set<string>(); // queued or running jobs
  const deliveryKeys = new Set<string>(); // queued or running deliveries
  const heap = new DueHeap<Entry>();
  const ready = new Fifo<Entry>(); // due deliveries waiting for a free slot
  const readyJobs: Entry[] = []; // due before start()
  const running = new Set<Promise<void>>();
  let runningDeliveries = 0;
  let handlers: WorkHandlers | undefined;
  let closed = false;
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let timerDueAt = Infinity;

  function track(promise: Promise<void>): void {
    running.add(promise);
    void promise.finally(() => running.delete(promise));
  }

  async function runJob(h: WorkHandlers, entry: Entry): Promise<void> {
    try {
      await h.runJob(entry.work as string);
    } catch (err) {
      logger.error({ err, jobId: entry.work }, 'memory work queue: runJob handler failed');
      // No retries here: the first failure is final. Before `finally`, so the dedupe key is still held.
      await abandonWork('memory work queue', h, { kind: 'job', jobId: entry.work as string }, err, logger);
    } finally {
      jobKeys.delete(entry.key);
    }
  }

  async function deliver(h: WorkHandlers, entry: Entry): Promise<void> {
    const task = entry.work as DeliveryTask;
    try {
      await h.deliver({ ...task });
    } catch (err) {
      logger.error({ err, ...task }, 'memory work queue: deliver handler failed');
      await abandonWork('memory work queue', h, { kind: 'delivery', task: { ...task } }, err, logger);
    } finally {
      deliveryKeys.delete(entry.key);
      runningDeliveries--;
      pump();
    }
  }

  function dispatch(entry: Entry): void {
    if (typeof entry.work === 'string') {
      if (handlers === undefined) readyJobs.push(entry);
      else track(runJob(handlers, entry));
    } else {
      ready.push(entry);
    }
  }

  function pump(): void {
    const h = handlers;
    if (h === undefined || closed) return;
    while (runningDeliveries < concurrency && ready.size > 0) {
      runningDeliveries++;
      track(deliver(h, ready.shift() as Entry));
    }
  }

  function arm(): void {
    const first = heap.peek();
    if (first === undefined || closed || (timer !== undefined && timerDueAt <= first.dueAt)) return;
    clearTimeout(timer);
    timerDueAt = first.dueAt;
    timer = setTimeout(onTimer, Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(first.dueAt - now()))));
  }

  function onTimer(): void {
    timer = undefined;
    timerDueAt = Infinity;
    const t = now();
    for (let first = heap.peek(); first !== undefined && first.dueAt <= t; first = heap.peek()) dispatch(heap.pop() as Entry);
    pump();
    arm();
  }

  function add(key: string, work: string | DeliveryTask, delayMs: number): void {
    if (delayMs <= 0) {
      dispatch({ dueAt: 0, seq: 0, key, work });
      pump();
      return;
    }
    heap.push({ dueAt: now() + delayMs, seq: seq++, key, work });
    arm();
  }

  return {
    async scheduleJob(jobId, delayMs) {
      checkJobId(`${WHERE}: scheduleJob`, jobId);
      const delay = checkDelay(`${WHERE}: scheduleJob`, delayMs);
      if (closed || jobKeys.has(jobId)) return;
      jobKeys.add(jobId);
      add(jobId, jobId, delay);
    },
    async enqueueDelivery(task, delayMs = 0) {
      const copy = checkTask(`${WHERE}: enqueueDelivery`, task);
      const delay = checkDelay(`${WHERE}: enqueueDelivery`, delayMs);
      const key = deliveryKey(copy);
      if (closed || deliveryKeys.has(key)) return;
      deliveryKeys.add(key);
      add(key, copy, delay);
    },
    async start(h) {
      if (closed) throw optionError(WHERE, 'start() after close()');
      if (handlers !== undefined) throw optionError(WHERE, 'start() was already called');
      handlers = checkHandlers(WHERE, h);
      for (const entry of readyJobs.splice(0)) dispatch(entry);
      pump();
    },
    async counts(): Promise<WorkQueueCounts> {
      return { jobs: jobKeys.size, deliveries: deliveryKeys.size };
    },
    async close() {
      if (!closed) {
        closed = true;
        clearTimeout(timer);
        timer = undefined;
        heap.clear();
        ready.clear();
        readyJobs.length = 0;
        jobKeys.clear();
        deliveryKeys.clear();
      }
      // Handlers settling may not add work (closed), so this loop ends.
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
