// `bun serve-bun.mjs`: serves the app on 127.0.0.1 at a free port and prints `{"listening":port}`.
// Env: JOBHOOK_PUBLIC_KEY (PEM text); REDIS_URL, optional: the Redis store instead of memory.
import { createWebhookApp } from './webhook-app.mjs';

const redis = process.env.REDIS_URL;
// Loaded only when used, as an app without Redis would: ioredis is an optional peer of @jobhook/core.
const store = redis ? (await import('@jobhook/core/redis')).createRedisStore({ redis }) : undefined;
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: createWebhookApp(process.env.JOBHOOK_PUBLIC_KEY, { store }) });
console.log(JSON.stringify({ listening: server.port }));
