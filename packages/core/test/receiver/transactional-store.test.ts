/**
 * The pipeline with a store that runs the handler in its own transaction (the contract the
 * PostgreSQL store implements): the handler's writes and the done mark commit together or not at
 * all, `ctx.db` is the transaction, a concurrent delivery is answered at once, never waited for.
 * The store here keeps its "database" in memory with real transaction semantics: writes are
 * buffered per transaction and applied only on commit.
 */
import { describe, expect, it } from 'vitest';
import {
  createReceiver,
  JobhookError,
  silentLogger,
  type ClaimResult,
  type TransactionalStore,
  type TransactionResult,
} from '../../src/index.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';

const keys = createTestKeyPair();

/** A transaction: rows written by the handler, visible to the world only after commit. */
interface Tx {
  insert(row: string): void;
}

function createTxStore(options: { failCommit?: boolean } = {}) {
  const rows: string[] = []; // committed rows of the "results table"
  const done = new Set<string>(); // committed done marks
  const locked = new Set<string>(); // job ids with an open transaction (the try-lock)
  let transactions = 0;
  const unsupported = (): never => {
    throw new Error('a transactional store is driven through runInTransaction');
  };
  const store: TransactionalStore<Tx> = {
    claim: async (): Promise<ClaimResult> => unsupported(),
    complete: async () => unsupported(),
    release: async () => unsupported(),
    extend: async () => unsupported(),
    close: async () => undefined,
    async runInTransaction(jobId, _options, work): Promise<TransactionResult> {
      if (locked.has(jobId)) return { state: 'in-flight', retryAfterMs: 1000 };
      if (done.has(jobId)) return { state: 'done' };
      locked.add(jobId);
      transactions++;
      const pending: string[] = [];
      try {
        await work({ insert: (row) => void pending.push(row) });
      } catch (error) {
        return { state: 'rolled-back', error };
      } finally {
        locked.delete(jobId);
      }
      if (options.failCommit) throw new JobhookError('ERR_STORE_UNAVAILABLE', 'commit failed: connection lost');
      rows.push(...pending); // the handler's writes and the done mark: one commit
      done.add(jobId);
      return { state: 'committed' };
    },
  };
  return { store, rows, done, transactions: () => transactions };
}

describe('a transactional store', () => {
  it('runs the handler with the transaction as ctx.db; its writes and the done mark commit together; a duplicate is not run', async () => {
    const { store, rows, done } = createTxStore();
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      onEvent: async (event, ctx) => ctx.db.insert(`${event.job_id}:${event.status}`),
    });
    const request = buildSignedRequest();
    const first = await receiver.handle(request);
    const again = await receiver.handle(request);
    const jobId = first.event!.job_id;
    expect([first.status, first.outcome.kind, again.status, again.outcome.kind]).toEqual([200, 'handled', 200, 'duplicate']);
    expect(rows).toEqual([`${jobId}:success`]);
    expect([...done]).toEqual([jobId]);
  });

  it('a handler that throws rolls back its writes with the done mark: 500, and the retry runs it again', async () => {
    const { store, rows, done } = createTxStore();
    let calls = 0;
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      onEvent: async (event, ctx) => {
        ctx.db.insert(`${event.job_id}:${++calls}`);
        if (calls === 1) throw new Error('downstream failed after the insert');
      },
    });
    const request = buildSignedRequest();
    const failed = await receiver.handle(request);
    expect([failed.status, failed.outcome.code]).toEqual([500, 'ERR_HANDLER_FAILED']);
    expect(rows).toEqual([]);
    expect(done.size).toBe(0);
    const retried = await receiver.handle(request);
    expect(retried.status).toBe(200);
    expect(rows).toEqual([`${retried.event!.job_id}:2`]);
  });

  it('a concurrent delivery of the job is answered 503 at once, Retry-After from the store retryAfterMs (never a second run, never a wait)', async () => {
    const { store, rows } = createTxStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inHandler = new Promise<void>((resolve) => (started = resolve));
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      onEvent: async (event, ctx) => {
        started();
        await gate;
        ctx.db.insert(event.job_id);
      },
    });
    const request = buildSignedRequest();
    const first = receiver.handle(request);
    await inHandler;
    const concurrent = await receiver.handle(request);
    expect([concurrent.status, concurrent.outcome.code, concurrent.headers['retry-after']]).toEqual([503, 'ERR_JOB_IN_FLIGHT', '1']);
    release();
    expect((await first).status).toBe(200);
    expect(rows).toHaveLength(1);
  });

  it('a failed commit answers 503 (the sender retries) and keeps nothing', async () => {
    const { store, rows } = createTxStore({ failCommit: true });
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, store, onEvent: async (e, ctx) => ctx.db.insert(e.job_id) });
    const res = await receiver.handle(buildSignedRequest());
    expect([res.status, res.outcome.code, res.outcome.kind]).toEqual([503, 'ERR_STORE_UNAVAILABLE', 'store-unavailable']);
    expect(rows).toEqual([]);
  });

  it('a store that has not started the handler by handlerTimeoutMs: 503 ERR_STORE_UNAVAILABLE, and the handler never runs', async () => {
    const { store, rows, done } = createTxStore();
    let openTransaction!: () => void;
    const connectionFree = new Promise<void>((resolve) => (openTransaction = resolve));
    let late!: Promise<TransactionResult>;
    const waiting: TransactionalStore<Tx> = {
      ...store,
      runInTransaction: (jobId, options, work) => {
        // The pool has no free connection yet.
        late = connectionFree.then(() => store.runInTransaction(jobId, options, work));
        return late;
      },
    };
    let runs = 0;
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store: waiting,
      logger: silentLogger,
      handlerTimeoutMs: 20,
      onEvent: (event, ctx) => {
        runs++;
        ctx.db.insert(event.job_id);
      },
    });
    const res = await receiver.handle(buildSignedRequest());
    expect([res.status, res.outcome.kind, res.outcome.code, res.headers['retry-after']]).toEqual([
      503,
      'store-unavailable',
      'ERR_STORE_UNAVAILABLE',
      '30',
    ]);
    openTransaction();
    // The connection arrives after the answer: the work refuses to start, the transaction rolls back.
    expect((await late).state).toBe('rolled-back');
    expect([runs, rows, [...done]]).toEqual([0, [], []]);
  });

  it('a handler still running at handlerTimeoutMs: 503 ERR_HANDLER_TIMEOUT (the store did start it)', async () => {
    const { store } = createTxStore();
    let finish!: () => void;
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      store,
      logger: silentLogger,
      handlerTimeoutMs: 20,
      onEvent: () => new Promise<void>((resolve) => (finish = resolve)),
    });
    const res = await receiver.handle(buildSignedRequest());
    expect([res.status, res.outcome.code]).toEqual([503, 'ERR_HANDLER_TIMEOUT']);
    finish();
  });

  it('with other stores ctx.db is undefined', async () => {
    const seen: unknown[] = [];
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: (_e, ctx) => void seen.push(ctx.db) });
    expect((await receiver.handle(buildSignedRequest())).status).toBe(200);
    expect(seen).toEqual([undefined]);
  });
});
