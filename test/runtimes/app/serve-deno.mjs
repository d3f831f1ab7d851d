// `deno run --allow-net=127.0.0.1 --allow-env=JOBHOOK_PUBLIC_KEY,REDIS_URL --allow-sys=hostname serve-deno.mjs`
// (hostname: the default logger writes it in each line; with REDIS_URL set, `--allow-env` whole:
// ioredis reads the whole environment): serves the app on 127.0.0.1 at a free port and
// prints `{"listening":port}`. Env: JOBHOOK_PUBLIC_KEY (PEM text); REDIS_URL, optional: the Redis
// store instead of memory.
import { createWebhookApp } from './webhook-app.mjs';

const redis = Deno.env.get('REDIS_URL');
// Loaded only when used, as an app without Redis would: ioredis is an optional peer of @jobhook/core.
const store = redis ? (await import('@jobhook/core/redis')).createRedisStore({ redis }) : undefined;
Deno.serve(
  { hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log(JSON.stringify({ listening: port })) },
  createWebhookApp(Deno.env.get('JOBHOOK_PUBLIC_KEY'), { store }),
);
