import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRedisLedger } from '@jobhook/core/redis';
import { createFakeClock, describeLedgerConformance, rejectionCode } from '@jobhook/core/testing';
import { startRedisCluster, startRedisServer, type RedisCluster, type RedisServer } from '../helpers/redis-server.js';

const prefix = (): string => `jobhook-ledger-${randomUUID().slice(0, 8)}:`;

let server: RedisServer;
let shared: Redis;
let cluster: RedisCluster;
let clusterClient: Cluster;

beforeAll(async () => {
  server = await startRedisServer();
  shared = server.client();
  cluster = await startRedisCluster(3);
  clusterClient = new Cluster([...cluster.nodes]);
});
afterAll(async () => {
  clusterClient?.disconnect();
  await cluster?.dispose();
  await server?.dispose();
});

const api = { describe, it, expect, beforeEach, afterEach };
describeLedgerConformance('redis ledger (URL)', (clock) => createRedisLedger({ redis: server.url, keyPrefix: prefix(), clock }), api);
describeLedgerConformance(
  'redis ledger (client passed in)',
  (clock) => createRedisLedger({ redis: shared, keyPrefix: prefix(), clock }),
  api,
);
describeLedgerConformance(
  'redis ledger (Redis Cluster)',
  (clock) => createRedisLedger({ redis: clusterClient, keyPrefix: prefix(), clock }),
  api,
);

describe('createRedisLedger', () => {
  it('instances sharing a Redis and prefix share the entries; another prefix is another ledger', async () => {
    const clock = createFakeClock(Date.UTC(2025, 0, 1));
    const p = prefix();
    const a = createRedisLedger({ redis: shared, keyPrefix: p, clock });
    const b = createRedisLedger({ redis: shared, keyPrefix: p, clock });
    const other = createRedisLedger({ redis: shared, keyPrefix: prefix(), clock });
    const jobId = randomUUID();
    await a.begin('k', { dueAt: clock.now() });
    await a.attach('k', jobId);
    expect(await other.count()).toEqual({ attached: 0, unattached: 0 });
    expect(await b.settle(jobId)).toBe(true);
    expect(await a.count()).toEqual({ attached: 0, unattached: 0 });
  });

  it('refuses bad options', () => {
    expect(() => createRedisLedger({ redis: 'http://x' })).toThrow(/redis:\/\//);
    expect(() => createRedisLedger({ redis: shared, keyPrefix: 'a{b' })).toThrow(/keyPrefix/);
    expect(() => createRedisLedger({ redis: shared, operationTimeoutMs: 0 })).toThrow(/operationTimeoutMs/);
  });

  it('answers ERR_STORE_UNAVAILABLE when Redis is not there', async () => {
    const ledger = createRedisLedger({ redis: 'redis://127.0.0.1:1', operationTimeoutMs: 300 });
    expect(await rejectionCode(ledger.begin('k', { dueAt: 0 }))).toBe('ERR_STORE_UNAVAILABLE');
    await ledger.close();
  });
});
