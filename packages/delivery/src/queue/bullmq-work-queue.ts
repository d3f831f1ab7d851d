import { JobhookError } from '@jobhook/core';
import { optionError, redactUrl } from '@jobhook/core/internal';
import { bullmqConnection, connectRedis, DEFAULT_CONNECT_TIMEOUT_MS, quitRedisClient } from '@jobhook/core/internal/redis';
import { Queue, Worker, type Job } from 'bullmq';
import type { DeliveryTask } from '../delivery-types.js';
import { bullmqDeliveryId, bullmqJobId } from './bullmq-ids.js';
import { BULLMQ_QUEUE_NAMES, JOB_OPTIONS } from './bullmq-job-options.js';
import { resolveBullmqWorkQueueOptions, type BullmqWorkQueueOptions } from '../options/bullmq-work-queue-options.js';
import { abandonWork } from './abandon-work.js';
import { checkBullmqJobId, checkDelay, checkHandlers, checkTask } from '../options/work-queue-arguments.js';
import type { QueuedWork, WorkHandlers, WorkQueue, WorkQueueCounts } from './work-queue.js';

export { BULLMQ_QUEUE_NAMES } from './bullmq-job-options.js';
export type { BullmqWorkQueueOptions } from '../options/bullmq-work-queue-options.js';

const WHERE = 'createBullmqWorkQueue';

/**
 * The Redis-backed work queue (BullMQ 6): work survives a restart, and several sender processes on
 * the same Redis and `prefix` share it, each delayed or queued item run by one of them.
 *
 * - Ids: a job is BullMQ job `job-{jobId}`, a delivery `delivery-{jobId}-{round}-{attempt}` (BullMQ
 *   refuses `:` in custom ids, so `-` separates; the two trailing integers keep it unambiguous).
 *   Adding an id that is waiting, delayed, active or still kept as finished is a no-op, so two
 *   processes enqueueing the same attempt send it once. Job ids must not contain `:`.
 * - Delays are BullMQ delayed jobs. Finished jobs are trimmed (kept 1 h / 1000 when completed,
 *   24 h / 1000 when failed).
 * - A handler that throws is logged and run again, up to 3 runs in all (200 ms, then 400 ms later):
 *   the handlers are idempotent. After the last run fails, the work is handed to
 *   `handlers.abandoned` (when given), by the process that ran it.
 * - At-least-once: when a process dies while a handler runs (killed mid-delivery), BullMQ sees the
 *   job as stalled once its lock expires (`lockDurationMs`) and another or the restarted process runs
 *   it again, so an attempt interrupted by a crash may be sent again. Receivers must tolerate it (the
 *   spec: "the same job_id may be delivered more than once").
 * - `close()` closes the workers (waiting for running handlers, which may still enqueue), then the
 *   queues and their connections. Enqueueing after `close()` rejects.
 *
 * @throws JobhookError `ERR_OPTION_INVALID` for a bad option or URL; `ERR_STORE_UNAVAILABLE` when
 * Redis cannot be reached within a few seconds (and from enqueueing when Redis fails).
 * @example
 * ```ts
 * const queue = await createBullmqWorkQueue({ connection: 'redis://127.0.0.1:6379/0' });
 * await queue.start({ runJob, deliver });
 * ```
 */
export async function createBullmqWorkQueue(options: BullmqWorkQueueOptions): Promise<WorkQueue> {
  const { url, prefix, concurrency, jobConcurrency, lockDurationMs, logger } = resolveBullmqWorkQueueOptions(options);

  // Fails fast (and clearly) on a bad URL or an unreachable Redis; BullMQ's own connections would retry forever.
  await quitRedisClient(await connectRedis(WHERE, url), DEFAULT_CONNECT_TIMEOUT_MS);

  const logError = (where: string) => (err: Error) => logger.error({ err, queue: where }, 'bullmq work queue: Redis error');
  const jobs = new Queue(BULLMQ_QUEUE_NAMES.jobs, { connection: bullmqConnection(url, 'queue'), prefix });
  const deliveries = new Queue(BULLMQ_QUEUE_NAMES.deliveries, { connection: bullmqConnection(url, 'queue'), prefix });
  jobs.on('error', logError(BULLMQ_QUEUE_NAMES.jobs));
  deliveries.on('error', logError(BULLMQ_QUEUE_NAMES.deliveries));
  try {
    await Promise.all([jobs.waitUntilReady(), deliveries.waitUntilReady()]);
  } catch (err) {
    await Promise.allSettled([jobs.close(), deliveries.close()]);
    throw new JobhookError('ERR_STORE_UNAVAILABLE', `${WHERE}: cannot open the queues on ${redactUrl(url)}: ${(err as Error).message}`, {
      cause: err,
    });
  }

  let workers: Worker[] = [];
  let closing: Promise<void> | undefined;
  // `abandoned` hooks still running: a 'failed' listener is not awaited by BullMQ, so close() waits for them.
  const abandoning = new Set<Promise<void>>();
  // Handlers running now: close() waits for them itself, so what it then leaves to Worker.close is teardown.
  const handling = new Set<Promise<void>>();

  async function add(queue: Queue, name: string, data: object, id: string, delayMs: number): Promise<void> {
    if (closing !== undefined && workers.length === 0) throw new JobhookError('ERR_STORE_UNAVAILABLE', `${WHERE}: the queue is closed`);
    // BullMQ delays are whole milliseconds: round up so work never runs early.
    const delay = Math.ceil(delayMs);
    try {
      await queue.add(name, data, { ...JOB_OPTIONS, jobId: id, ...(delay > 0 ? { delay } : {}) });
    } catch (err) {
      throw new JobhookError('ERR_STORE_UNAVAILABLE', `${WHERE}: could not enqueue ${id}: ${(err as Error).message}`, { cause: err });
    }
  }

  function startWorker(name: string, workerConcurrency: number, handlers: WorkHandlers): Worker {
    const processor = async (job: Job): Promise<void> => {
      const work = workOf(name, job);
      const running = work.kind === 'job' ? handlers.runJob(work.jobId) : handlers.deliver(work.task);
      const settled = running.then(noop, noop);
      handling.add(settled);
      try {
        await running;
      } finally {
        handling.delete(settled);
      }
    };
    const worker = new Worker(name, processor, {
      connection: bullmqConnection(url, 'worker'),
      prefix,
      concurrency: workerConcurrency,
      lockDuration: lockDurationMs,
      stalledInterval: lockDurationMs,
    });
    worker.on('error', logError(name));
    worker.on('failed', (job, err) => {
      // Emitted after BullMQ moved the job (attemptsMade counts this run): no retry is left when the
      // runs are used up, or on an UnrecoverableError (BullMQ's own, e.g. work that stalled too often).
      const willRetry = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1) && err.name !== 'UnrecoverableError';
      logger.error({ err, queue: name, id: job?.id, attemptsMade: job?.attemptsMade, willRetry }, 'bullmq work queue: handler failed');
      if (job === undefined || willRetry) return;
      const giving = abandonWork('bullmq work queue', handlers, workOf(name, job), err, logger);
      abandoning.add(giving);
      void giving.finally(() => abandoning.delete(giving));
    });
    worker.on('stalled', (id) => logger.warn({ queue: name, id }, 'bullmq work queue: stalled work taken up again (its process died?)'));
    return worker;
  }

  return {
    async scheduleJob(jobId, delayMs) {
      checkBullmqJobId(`${WHERE}: scheduleJob`, jobId);
      const delay = checkDelay(`${WHERE}: scheduleJob`, delayMs);
      await add(jobs, 'run-job', { jobId }, bullmqJobId(jobId), delay);
    },
    async enqueueDelivery(task, delayMs = 0) {
      const copy = checkTask(`${WHERE}: enqueueDelivery`, task);
      checkBullmqJobId(`${WHERE}: enqueueDelivery`, copy.jobId);
      const delay = checkDelay(`${WHERE}: enqueueDelivery`, delayMs);
      await add(deliveries, 'deliver', copy, bullmqDeliveryId(copy), delay);
    },
    async start(handlers: WorkHandlers) {
      if (closing !== undefined) throw optionError(WHERE, 'start() after close()');
      if (workers.length > 0) throw optionError(WHERE, 'start() was already called');
      checkHandlers(WHERE, handlers);
      workers = [
        startWorker(BULLMQ_QUEUE_NAMES.jobs, jobConcurrency, handlers),
        startWorker(BULLMQ_QUEUE_NAMES.deliveries, concurrency, handlers),
      ];
      await Promise.all(workers.map((w) => w.waitUntilReady()));
    },
    async counts(): Promise<WorkQueueCounts> {
      try {
        const [j, d] = await Promise.all([pending(jobs), pending(deliveries)]);
        return { jobs: j, deliveries: d };
      } catch (err) {
        throw new JobhookError('ERR_STORE_UNAVAILABLE', `${WHERE}: could not count the queues: ${(err as Error).message}`, { cause: err });
      }
    },
    close() {
      closing ??= (async () => {
        // Workers first: their running handlers may still enqueue the next attempt. Worker.close stops
        // taking work and waits for them; we wait for them too, then give its connection teardown a
        // bounded grace: after Redis went away and came back, a blocking client left reconnecting never
        // ends and Worker.close never settles (taskforcesh/bullmq#4656), which would hold shutdown forever.
        const closingWorkers = Promise.allSettled(workers.map((w) => w.close()));
        while (handling.size > 0) await Promise.allSettled([...handling]);
        if ((await settleWithin(closingWorkers, WORKER_TEARDOWN_GRACE_MS)) === 'late') {
          logger.warn({ queue: WHERE }, 'bullmq work queue: a worker did not close its Redis connections in time; disconnecting them');
          for (const w of workers) void w.disconnect().catch(noop);
        }
        // Then the abandoned hooks of the last failures, which may still write and enqueue too.
        while (abandoning.size > 0) await Promise.allSettled([...abandoning]);
        workers = [];
        await Promise.allSettled([jobs.close(), deliveries.close()]);
      })();
      return closing;
    },
  };
}

/** The work a BullMQ job of queue `name` carries. */
function workOf(name: string, job: Job): QueuedWork {
  if (name === BULLMQ_QUEUE_NAMES.jobs) return { kind: 'job', jobId: (job.data as { jobId: string }).jobId };
  const { jobId, round, attempt } = job.data as DeliveryTask;
  return { kind: 'delivery', task: { jobId, round, attempt } };
}

async function pending(queue: Queue): Promise<number> {
  const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** How long close() gives BullMQ's workers to tear their connections down once no handler runs. */
const WORKER_TEARDOWN_GRACE_MS = 2_000;

/** `'done'` when `promise` settles within `ms`, else `'late'` (the promise is left to settle whenever). */
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<'done' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    return await Promise.race([promise.then(() => 'done' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

function noop(): void {}
