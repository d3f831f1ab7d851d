import type { BigIntegers, LosslessJsonValue } from '../canonical/to-value.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import type { Logger } from '../log/logger.js';
import type { RecipientBinding } from '../recipient/recipient-check.js';
import { JobContext } from './job-context.js';
import type { JobEnd } from './job-end.js';
import type { RunJob } from './job-runner.js';
import { polledEvent, type PolledJob, type PolledOutcome } from './polled-job.js';

/** What the poll path needs of its receiver. @internal */
export interface PolledSetup {
  readonly bigIntegers: BigIntegers;
  readonly recipient: RecipientBinding | undefined;
  readonly runJob: RunJob;
  readonly log: Logger;
}

/**
 * `receiver.handlePolled`: a poll answer (no signature: the caller vouches for it) through the same
 * job stage as its webhook, so the job is handled once whichever comes first.
 * @internal
 */
export function createPolledHandler(setup: PolledSetup): (job: PolledJob) => Promise<PolledOutcome> {
  const { bigIntegers, recipient, runJob, log } = setup;
  return async function handlePolled(job) {
    let event: AsyncJobCompletedEvent;
    try {
      event = polledEvent(job, bigIntegers);
    } catch (error) {
      return { kind: 'rejected', error };
    }
    const jobId = event.job_id.toLowerCase();
    // No signature covers a poll answer: its lossless form is the answer as the client read it.
    const context = new JobContext(jobId, 'poll', null, null, {}, log, { losslessPayload: () => job as LosslessJsonValue });
    let end: JobEnd;
    try {
      // A valid tag's nonce is bound to this job too, so that a copy on another job's webhook is refused:
      // read from the answer itself, since the event comes without the tag.
      if (recipient !== undefined) await recipient.bindPolled(job.user_parameters, Date.now(), jobId);
      end = await runJob(event, context);
    } catch (error) {
      return { kind: 'store-unavailable', jobId, error };
    }
    switch (end.kind) {
      case 'done':
        return { kind: 'handled', jobId };
      case 'duplicate':
        return { kind: 'duplicate', jobId };
      case 'handlers-busy':
        return { kind: 'handlers-busy', jobId };
      case 'in-flight':
        return { kind: 'in-flight', jobId, retryAfterMs: end.retryAfterMs };
      case 'timeout':
        return { kind: 'handler-timeout', jobId };
      case 'failed':
        return { kind: 'handler-failed', jobId, error: end.error };
    }
  };
}
