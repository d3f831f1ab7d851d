// The idempotency store contract (the suite the memory and Redis stores pass), on a real PostgreSQL,
// in both modes and with both kinds of connection. Each store gets a table of its own.
import { randomUUID } from 'node:crypto';
import { describeStoreConformance } from '@jobhook/core/testing';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { startPostgresServer, type PostgresServer } from './helpers/postgres-server.js';

let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startPostgresServer();
  pool = server.pool();
});
afterAll(async () => {
  await server?.dispose();
});

const table = (): string => `jobhook_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const api = { describe, it, expect, beforeEach, afterEach, tagNonceStore: true };

describeStoreConformance(
  'postgres (a pg Pool passed in)',
  async () => {
    const store = createPostgresStore({ pool }, { table: table() });
    await store.migrate();
    return store;
  },
  api,
);
describeStoreConformance(
  'postgres (connectionString: the store owns its pool; transactional: false)',
  async () => {
    const store = createPostgresStore(
      { connectionString: server.url },
      { table: table(), schema: 'jobhook_conformance', transactional: false },
    );
    await store.migrate();
    return store;
  },
  api,
);
