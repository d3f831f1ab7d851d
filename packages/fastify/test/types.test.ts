// Compile-time checks (tsconfig.test.json typechecks this file): the options union and the typed
// request decoration. The runtime assertions only keep vitest happy.
import Fastify from 'fastify';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createReceiver, type AsyncJobCompletedEvent } from '@jobhook/core';
import { jobhook, type JobhookPluginOptions } from '../src/index.js';
import { keys } from './helpers.js';

describe('@jobhook/fastify: types', () => {
  it('takes receiver options or a receiver, not both', async () => {
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    const app = Fastify();
    app.register(jobhook, { publicKeys: keys.publicKeyPem, onSuccess: (event) => void event.output, path: '/a' });
    app.register(jobhook, { receiver, path: '/b' });
    // @ts-expect-error a receiver and receiver options are exclusive
    const both: JobhookPluginOptions = { receiver, publicKeys: keys.publicKeyPem };
    // @ts-expect-error path is a string
    const badPath: JobhookPluginOptions = { receiver, path: 1 };
    expect([both, badPath]).toHaveLength(2);
    await app.ready();
    await app.close();
    await receiver.close();
  });

  it('declares request.jobhookEvent', () => {
    const app = Fastify();
    app.addHook('onResponse', async (request) => {
      expectTypeOf(request.jobhookEvent).toEqualTypeOf<AsyncJobCompletedEvent | undefined>();
    });
    expect(app).toBeDefined();
  });
});
