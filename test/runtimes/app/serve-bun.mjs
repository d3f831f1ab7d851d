// `bun serve-bun.mjs`: serves the app on 127.0.0.1 at a free port and prints `{"listening":port}`.
// Env: SERVICE_PUBLIC_KEY (PEM text).
import { createWebhookApp } from './webhook-app.mjs';

const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: createWebhookApp(process.env.SERVICE_PUBLIC_KEY) });
console.log(JSON.stringify({ listening: server.port }));
