// `deno run --allow-net=127.0.0.1 --allow-env=SERVICE_PUBLIC_KEY --allow-sys=hostname serve-deno.mjs`
// (hostname: the default logger writes it in each line): serves the app on
// 127.0.0.1 at a free port and prints `{"listening":port}`. Env: SERVICE_PUBLIC_KEY (PEM text).
import { createWebhookApp } from './webhook-app.mjs';

Deno.serve(
  { hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log(JSON.stringify({ listening: port })) },
  createWebhookApp(Deno.env.get('SERVICE_PUBLIC_KEY')),
);
