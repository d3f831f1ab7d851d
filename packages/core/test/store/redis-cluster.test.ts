import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis-store.js';
import { redisCommand, startRedisCluster, type RedisCluster } from '../helpers/redis-server.js';
import { describeStoreConformance } from './conformance.js';

const prefix = (): string => `jobhook-test-${randomUUID().slice(0, 8)}:`;

let cluster: RedisCluster;
let client: Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  client = new Cluster([...cluster.nodes]);
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
});
afterAll(async () => {
  client?.disconnect();
  await cluster?.dispose();
});

describeStoreConformance(
  'redis cluster (3 masters, a Cluster client passed in)',
  () => createRedisStore({ redis: client, keyPrefix: prefix() }),
  {
    tagNonceStore: true,
  },
);

describe('createRedisStore on Redis Cluster', () => {
  it('spreads jobs over every node, each key in the slot of its job id', async () => {
    const keyPrefix = prefix();
    const store = createRedisStore({ redis: client, keyPrefix });
    const ids = Array.from({ length: 300 }, () => randomUUID());
    const tokens = await Promise.all(
      ids.map(async (id) => {
        const result = await store.claim(id, { leaseMs: 30_000 });
        if (result.state !== 'claimed') throw new Error(`expected claimed, got ${result.state}`);
        return result.token;
      }),
    );
    const perNode: number[] = [];
    for (const node of cluster.nodes) {
      const keys = await redisCommand(node.port, ['KEYS', `${keyPrefix}*`]);
      expect(Array.isArray(keys)).toBe(true);
      perNode.push((keys as string[]).length);
    }
    expect(perNode.reduce((a, b) => a + b, 0)).toBe(300);
    for (const count of perNode) expect(count).toBeGreaterThan(30); // ~100 each, evenly spread slots
    for (const id of ids.slice(0, 10)) {
      const port = cluster.nodes[0]!.port;
      expect(await redisCommand(port, ['CLUSTER', 'KEYSLOT', `${keyPrefix}{${id}}`])).toBe(
        await redisCommand(port, ['CLUSTER', 'KEYSLOT', id]),
      );
    }
    const completed = await Promise.all(ids.map((id, i) => store.complete(id, tokens[i]!, { ttlMs: 60_000 })));
    expect(completed.every(Boolean)).toBe(true);
    const again = await Promise.all(ids.map((id) => store.claim(id, { leaseMs: 1000 })));
    expect(again.every((r) => r.state === 'done')).toBe(true);
    await store.close();
  });
});
