// Compile-time checks (tsconfig.test.json typechecks this file): the options union and the typed
// request decoration. The runtime assertions only keep vitest happy.
import Fastify from 'fastify';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createReceiver, type VerifiedWebhook } from '@jobhook/core';
import { jobhookFastify, type FastifyPluginOptions } from '../src/index.js';
import { keys } from './helpers.js';

describe('@jobhook/fastify: types', () => {
  it('takes receiver options or a receiver, then { path }', async () => {
    const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {} });
    const app = Fastify();
    app.register(
      jobhookFastify(
        { publicKeys: keys.publicKeyPem, onSuccess: (event) => void event.output, onFail: (event) => void event.error },
        { path: '/a' },
      ),
    );
    app.register(jobhookFastify(receiver, { path: '/b' }));
    expectTypeOf(jobhookFastify(receiver).receiver).toEqualTypeOf(receiver);
    // @ts-expect-error path is a string
    const badPath: FastifyPluginOptions = { path: 1 };
    expect([badPath]).toHaveLength(1);
    await app.ready();
    await app.close();
    await receiver.close();
  });

  it('declares request.jobhook', () => {
    const app = Fastify();
    app.addHook('onResponse', async (request) => {
      expectTypeOf(request.jobhook).toEqualTypeOf<VerifiedWebhook | undefined>();
    });
    expect(app).toBeDefined();
  });
});
