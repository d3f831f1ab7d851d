// The memory job store is bounded: settled jobs expire after settledTtlMs and are dropped least
// recently used first beyond maxJobs / maxBytes; unsettled jobs (processing, delivery pending) are
// never dropped, and when they alone fill the store, create refuses with ERR_STORE_FULL.
import { describe, expect, it } from 'vitest';
import { createMemoryJobStore, OUTPUT_TOO_LARGE } from '../../src/jobs/memory-job-store.js';
import { buildAttempt, buildJob, successResult } from './job-fixtures.js';

/** A clock the test moves. */
function manualClock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** A job without receiver: settled as soon as it is finished. */
const plainJob = () => buildJob({ webhookReceiver: null, delivery: null });

describe('memory job store: bounded', () => {
  it('a settled job is forgotten settledTtlMs after it settled (get undefined, log empty), an unsettled one never', async () => {
    const clock = manualClock();
    const store = createMemoryJobStore({ settledTtlMs: 1000, now: clock.now });
    const finished = plainJob();
    const pending = buildJob(); // a receiver, delivery pending
    await store.create(finished);
    await store.create(pending);
    await store.finish(finished.jobId, successResult());
    await store.finish(pending.jobId, successResult()); // final, yet its delivery is pending
    await store.appendAttempt(pending.jobId, buildAttempt(1));

    clock.advance(999);
    expect(await store.get(finished.jobId)).toBeDefined();
    clock.advance(2);
    expect(await store.get(finished.jobId)).toBeUndefined();
    expect(await store.listAttempts(finished.jobId)).toEqual([]);
    clock.advance(10 * 24 * 3600 * 1000);
    expect(await store.get(pending.jobId)).toMatchObject({ delivery: 'pending' });
    expect(await store.listAttempts(pending.jobId)).toHaveLength(1);

    // Once its round ends it settles, and the TTL starts then.
    expect(await store.endRound(pending.jobId, 0, 'delivered')).toBe(true);
    clock.advance(999);
    expect(await store.listAttempts(pending.jobId)).toHaveLength(1);
    clock.advance(2);
    expect(await store.get(pending.jobId)).toBeUndefined();
  });

  it('beyond maxJobs, settled jobs are dropped least recently used first; unsettled ones stay', async () => {
    const store = createMemoryJobStore({ maxJobs: 3 });
    const [a, b, c] = [plainJob(), plainJob(), plainJob()];
    for (const job of [a!, b!, c!]) {
      await store.create(job);
      await store.finish(job.jobId, successResult());
    }
    await store.get(a!.jobId); // a is now more recently used than b
    const d = plainJob();
    await store.create(d); // processing: 4 jobs, one settled must go: b
    expect(await store.get(b!.jobId)).toBeUndefined();
    expect(await store.get(a!.jobId)).toBeDefined();
    expect(await store.get(c!.jobId)).toBeDefined();
    expect(await store.get(d.jobId)).toMatchObject({ status: 'processing' });
  });

  it('when unsettled jobs fill maxJobs, create refuses with ERR_STORE_FULL (503) until one settles', async () => {
    const store = createMemoryJobStore({ maxJobs: 2 });
    const [a, b] = [plainJob(), plainJob()];
    await store.create(a!);
    await store.create(b!);
    const refused = plainJob();
    await expect(store.create(refused)).rejects.toMatchObject({ name: 'SenderError', code: 'ERR_STORE_FULL', status: 503 });
    expect(await store.get(refused.jobId)).toBeUndefined();
    expect(await store.get(a!.jobId)).toBeDefined();
    await store.finish(a!.jobId, successResult());
    await store.create(refused); // a settled: it is dropped to make room
    expect(await store.get(refused.jobId)).toBeDefined();
    expect(await store.get(a!.jobId)).toBeUndefined();
  });

  it('maxBytes bounds the estimated size the same way (a 1 MB input counts)', async () => {
    const store = createMemoryJobStore({ maxBytes: 3 * 1024 * 1024 });
    const big = () => buildJob({ webhookReceiver: null, delivery: null, inputJson: JSON.stringify({ text: 'x'.repeat(1024 * 1024) }) });
    const first = big();
    await store.create(first);
    await expect(store.create(big())).rejects.toMatchObject({ code: 'ERR_STORE_FULL' }); // 2 × 1 MiB characters = 4 MiB estimated
    await store.finish(first.jobId, successResult());
    const second = big();
    await store.create(second);
    expect(await store.get(first.jobId)).toBeUndefined();
    expect(await store.get(second.jobId)).toBeDefined();
  });

  it('a result too large for the store (over half of maxBytes for one job): the job fails with output_too_large, and stays known once settled', async () => {
    const store = createMemoryJobStore({ maxBytes: 1024 * 1024 }); // the sender's smallest maxStoredJobBytes
    const job = buildJob();
    await store.create(job);
    const finished = await store.finish(job.jobId, successResult('x'.repeat(300 * 1024))); // ~600 KB estimated
    expect(finished).toMatchObject({
      status: 'fail',
      outputJson: null,
      originalResponseJson: null,
      error: { error_code: OUTPUT_TOO_LARGE },
    });
    expect(finished?.error?.message).toMatch(/larger than the job store keeps for one job \(half of its 1048576 bytes\)/);
    expect(await store.endRound(job.jobId, 0, 'delivered')).toBe(true); // settled: moves to the cache
    expect(await store.get(job.jobId)).toMatchObject({ status: 'fail', delivery: 'delivered', error: { error_code: OUTPUT_TOO_LARGE } });
    expect((await store.listJobs(job.organizationId, { limit: 10 })).jobs.map((j) => j.jobId)).toEqual([job.jobId]);
    // A result that fits is kept as it is.
    const small = buildJob();
    await store.create(small);
    expect(await store.finish(small.jobId, successResult('x'.repeat(100 * 1024)))).toMatchObject({ status: 'success' });
  });

  it('unsettled jobs never grow past maxBytes at finish: the result that would is refused (output_too_large), not kept', async () => {
    const store = createMemoryJobStore({ maxBytes: 1024 * 1024 });
    const jobs = [buildJob(), buildJob(), buildJob()]; // delivery pending: unsettled after finish too
    for (const job of jobs) await store.create(job);
    const results = [];
    for (const job of jobs) results.push(await store.finish(job.jobId, successResult('y'.repeat(200 * 1024)))); // ~400 KB each
    expect(results.map((r) => r?.status)).toEqual(['success', 'success', 'fail']);
    expect(results[2]?.error).toMatchObject({
      error_code: OUTPUT_TOO_LARGE,
      message: expect.stringMatching(/no room for the job's result/),
    });
    for (const job of jobs) expect(await store.get(job.jobId)).toBeDefined();
  });

  it('a settled job whose delivery log alone grows past maxBytes is dropped (lru-cache refuses it) and leaves the list', async () => {
    const store = createMemoryJobStore({ maxBytes: 1024 * 1024 });
    const job = buildJob({ webhookReceiver: null, delivery: null });
    await store.create(job);
    await store.finish(job.jobId, successResult());
    const big = (n: number) => buildAttempt(n, { errorMessage: 'z'.repeat(200 * 1024) }); // ~400 KB each
    await store.appendAttempt(job.jobId, big(1));
    await store.appendAttempt(job.jobId, big(2));
    expect(await store.get(job.jobId)).toBeDefined();
    await store.appendAttempt(job.jobId, big(3)); // past 1 MiB on its own
    expect(await store.get(job.jobId)).toBeUndefined();
    expect((await store.listJobs(job.organizationId, { limit: 10 })).jobs).toEqual([]);
  });

  it('a redeliver makes a settled job unsettled again: not dropped while its round is pending', async () => {
    const store = createMemoryJobStore({ maxJobs: 2 });
    const job = buildJob();
    await store.create(job);
    await store.finish(job.jobId, successResult());
    expect(await store.endRound(job.jobId, 0, 'rejected')).toBe(true);
    expect(await store.startRound(job.jobId, 1)).toBe(true);
    const other = plainJob();
    await store.create(other);
    await expect(store.create(plainJob())).rejects.toMatchObject({ code: 'ERR_STORE_FULL' });
    expect(await store.get(job.jobId)).toMatchObject({ delivery: 'pending', deliveryRound: 1 });
  });

  it('refuses wrong limits, 3e9 ms TTL included, with ERR_OPTION_INVALID naming them', () => {
    for (const [options, name] of [
      [{ maxJobs: 0 }, 'maxJobs'],
      [{ maxBytes: 1.5 }, 'maxBytes'],
      [{ settledTtlMs: 3e9 }, 'settledTtlMs must be an integer from 1 to 2147483647, got 3000000000'],
      [{ settledTtlMs: 0 }, 'settledTtlMs'],
    ] as const) {
      expect(() => createMemoryJobStore(options)).toThrow(
        expect.objectContaining({ code: 'ERR_OPTION_INVALID', message: expect.stringContaining(name) }),
      );
    }
  });
});
