// How the sender serves its page: the files of the build only, security headers, the `dashboard`
// option, and a clear 503 when the package was built without its page.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, test } from 'vitest';
import { DASHBOARD_CSP, registerDashboard } from '../../src/dashboard/serve-dashboard.js';
import { startTestSender } from '../sender/sender-fixtures.js';

const warnings: unknown[] = [];
const logger = { debug() {}, info() {}, warn: (...args: unknown[]) => warnings.push(args), error() {} };

describe('the page as served', async () => {
  const { sender } = await startTestSender();
  afterAll(() => sender.close());

  test.each([
    ['/dashboard/', 'text/html; charset=utf-8'],
    ['/dashboard', 'text/html; charset=utf-8'],
    ['/dashboard/main.js', 'text/javascript; charset=utf-8'],
    ['/dashboard/style.css', 'text/css; charset=utf-8'],
  ])('%s is %s with the CSP, nosniff and no referrer', async (url, type) => {
    const res = await sender.app.inject({ url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  test.each(['/dashboard/nothing.js', '/dashboard/../package.json', '/dashboard/%2e%2e%2fpackage.json', '/dashboard/tsconfig.json'])(
    '%s is 404: only the built files are served',
    async (url) => {
      expect((await sender.app.inject({ url })).statusCode).toBe(404);
    },
  );

  test('/ redirects to the page', async () => {
    const res = await sender.app.inject({ url: '/' });
    expect(res.statusCode).toBe(302);
    expect(res.headers['location']).toBe('/dashboard/');
  });
});

test('dashboard: false serves no page: / and /dashboard/ are 404 like any unknown route', async () => {
  const { sender } = await startTestSender({ dashboard: false });
  try {
    for (const url of ['/', '/dashboard/', '/dashboard/main.js']) {
      const res = await sender.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ detail: `no route GET ${url}` });
    }
  } finally {
    await sender.close();
  }
});

test('a package built without its page answers 503 saying how to build it, and warns once', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'jobhook-no-page-'));
  const app = Fastify();
  try {
    registerDashboard(app, logger, {}, empty);
    const res = await app.inject({ url: '/dashboard/' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build:dashboard -w @jobhook/sender');
    expect(warnings).toHaveLength(1);
  } finally {
    await app.close();
    rmSync(empty, { recursive: true, force: true });
  }
});

test('dashboardReceiver reaches the page as <body data-receiver>, escaped: a URL cannot break out of the attribute', async () => {
  const { sender } = await startTestSender({ dashboardReceiver: 'http://127.0.0.1:3000/webhooks/jobs' });
  const attack = await startTestSender({ dashboardReceiver: `https://hooks.example/x?a="><script>alert(1)</script>&b='` });
  try {
    const html = (await sender.app.inject({ url: '/dashboard/' })).body;
    expect(html).toContain('<body data-receiver="http://127.0.0.1:3000/webhooks/jobs">');
    const attacked = (await attack.sender.app.inject({ url: '/dashboard/' })).body;
    expect(attacked).not.toContain('alert(1)</script>');
    expect(attacked.match(/<script\b/g)).toHaveLength(1); // the page's own module only
    const value = /<body data-receiver="([^"]*)">/.exec(attacked)?.[1];
    expect(value).toBe('https://hooks.example/x?a=%22%3E%3Cscript%3Ealert(1)%3C/script%3E&amp;b=%27');
  } finally {
    await sender.close();
    await attack.sender.close();
  }
  // Without it the page is served as built.
  const plain = await startTestSender();
  try {
    expect((await plain.sender.app.inject({ url: '/dashboard/' })).body).toContain('<body>');
  } finally {
    await plain.sender.close();
  }
});

test.each([['ftp://x.test/'], ['not a url'], ['/relative/path'], [`https://x.test/${'a'.repeat(2048)}`], [42]])(
  'dashboardReceiver %s is refused with ERR_OPTION_INVALID naming it',
  async (value) => {
    await expect(startTestSender({ dashboardReceiver: value as string })).rejects.toMatchObject({
      code: 'ERR_OPTION_INVALID',
      message: expect.stringContaining('dashboardReceiver must be an http:// or https:// URL'),
    });
  },
);
