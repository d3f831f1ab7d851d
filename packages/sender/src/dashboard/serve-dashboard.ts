import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '@jobhook/core';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The built page: `dashboard-dist/` at the package root, the same two levels up from this module's
 * source (`src/dashboard/`) and its build (`dist/dashboard/`).
 */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../dashboard-dist/', import.meta.url));

/**
 * Only this page's own files, scripts and styles run: no inline script or style, no other origin
 * (no CDN: it works offline), no framing, no form posting elsewhere. The page reads the API of the
 * same origin with `fetch`.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** What the page is served with, beyond its files. @internal */
export interface DashboardSettings {
  /** The receiver URL the test-job form starts with (`dashboardReceiver`, normalized). */
  receiver?: string | undefined;
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '"': '&quot;', "'": '&#39;', '<': '&lt;', '>': '&gt;' };

/** `text` as an HTML attribute value: it cannot close the attribute nor open a tag. */
function attributeText(text: string): string {
  return text.replace(/[&"'<>]/g, (c) => ENTITIES[c] as string);
}

/**
 * index.html with the settings as `data-*` attributes of `<body>`: the page reads them from there
 * (no inline script, which the CSP forbids, and no extra request before the form can be filled).
 */
function withSettings(html: Buffer, settings: DashboardSettings): Buffer {
  if (settings.receiver === undefined) return html;
  const text = html.toString('utf8');
  if (!text.includes('<body>')) throw new Error('dashboard: index.html has no <body> tag');
  return Buffer.from(text.replace('<body>', `<body data-receiver="${attributeText(settings.receiver)}">`), 'utf8');
}

/** The page's files by name (a flat folder, read once: a few kB, and no path from a request ever reaches the disk). */
function readPage(dir: string): Map<string, Buffer> | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const files = new Map<string, Buffer>();
  for (const name of names) if (TYPES[extname(name)] !== undefined) files.set(name, readFileSync(join(dir, name)));
  return files.has('index.html') ? files : undefined;
}

function secured(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache');
}

/**
 * Serves the web page at `/dashboard/` (`/` redirects there) under a strict
 * Content-Security-Policy. The page holds no secret: it asks for an API key and calls the `/v3` API
 * with it, so it sees what that key's organization may see. When the package was not built with its
 * page (`npm run build:dashboard -w @jobhook/sender`), `/dashboard/` answers 503 saying so and a
 * warning is logged; the API is unaffected. `settings.receiver` reaches the page as
 * `<body data-receiver="…">`, escaped.
 * @internal
 */
export function registerDashboard(
  app: FastifyInstance,
  logger: Logger,
  settings: DashboardSettings = {},
  dir: string = DASHBOARD_DIST,
): void {
  const files = readPage(dir);
  const index = files?.get('index.html');
  if (files !== undefined && index !== undefined) files.set('index.html', withSettings(index, settings));
  if (files === undefined) logger.warn({ dir }, 'the dashboard page is not built: /dashboard/ answers 503');
  const serve = async (name: string, reply: FastifyReply): Promise<FastifyReply> => {
    if (files === undefined) {
      return secured(reply)
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The dashboard page is not built: run `npm run build:dashboard -w @jobhook/sender`.\n');
    }
    const body = files.get(name);
    if (body === undefined) return secured(reply).code(404).type('text/plain; charset=utf-8').send('not found\n');
    return secured(reply)
      .type(TYPES[extname(name)] as string)
      .send(body);
  };
  app.get('/', (_request, reply) => reply.redirect('/dashboard/', 302));
  // The API ignores trailing slashes: this route answers `/dashboard` and `/dashboard/` alike, so
  // the page names its files by absolute path.
  app.get('/dashboard', (_request, reply) => serve('index.html', reply));
  app.get('/dashboard/*', (request, reply) => serve((request.params as { '*': string })['*'], reply));
}
