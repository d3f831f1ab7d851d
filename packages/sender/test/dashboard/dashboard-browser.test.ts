// The web page in a real browser (the npm-shipped Chromium driven by playwright-core), against a sender
// with the memory and with the Redis job store, and a receiver of the test's own that fails the
// first delivery attempt (500) and then answers as a jobhook receiver (core's createReceiver).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJsonLogger, createKeyRing, createReceiver } from '@jobhook/core';
import { createTestKeyPair } from '@jobhook/core/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumLaunchOptions } from '../../../../scripts/chromium-launch.mjs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import type { Sender } from '../../src/index.js';
import { DASHBOARD_CSP, DASHBOARD_DIST } from '../../src/dashboard/serve-dashboard.js';
import { bearer, startTestSender, submitJob, TOKENS } from '../sender/sender-fixtures.js';

const DEMO_PUBLIC_KEY = join(dirname(fileURLToPath(import.meta.url)), '../../../../examples/keys/demo.public.pem');
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '../../../../test-artifacts');

let browser: Browser;
let redis: RedisServer;
beforeAll(async () => {
  // A missing browser or page build fails here, loudly: never a silent skip.
  if (!existsSync(join(DASHBOARD_DIST, 'index.html')))
    throw new Error('the page is not built: npm run build:dashboard -w @jobhook/sender (turbo builds it before npm test)');
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch(await chromiumLaunchOptions());
  redis = await startRedisServer();
});
afterAll(async () => {
  await browser?.close();
  await redis?.dispose();
});

interface FlakyReceiver {
  url: string;
  answers: number[];
  /** The receiver's log lines, kept rather than printed. */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Answers its first request 500 (unless `failFirst` is false), then every request as a jobhook receiver verifying with `publicKeyPem`. */
async function startFlakyReceiver(publicKeyPem: string, failFirst = true): Promise<FlakyReceiver> {
  const logs: Array<Record<string, unknown>> = [];
  const receiver = createReceiver({
    publicKeys: publicKeyPem,
    onEvent: () => {},
    logger: createJsonLogger({ write: (line) => void logs.push(JSON.parse(line) as Record<string, unknown>) }),
  });
  const answers: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failFirst && answers.length === 0) {
        answers.push(500);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('not yet');
        return;
      }
      void receiver.handle({ method: req.method ?? 'POST', headers: req.headers, rawBody: Buffer.concat(chunks) }).then((answer) => {
        answers.push(answer.status);
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}/hooks/jobs`,
    answers,
    logs,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await receiver.close();
    },
  };
}

/** Opens the page in a fresh context (its own session storage) and enters `token`. */
async function openWithKey(baseUrl: string, token: string, problems: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  // A CSP violation, a failed module or an uncaught error shows here: the test fails on any.
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  await page.goto(`${baseUrl}/`);
  await page.getByTestId('api-key').fill(token);
  await page.getByTestId('use-key').click();
  await page.locator('#signed-in').waitFor({ state: 'visible' });
  return page;
}

const stores = [
  { name: 'memory', options: () => ({}) },
  { name: 'redis', options: () => ({ redisUrl: redis.url, redisPrefix: `dash${process.pid}x${Date.now()}` }) },
];

describe.each(stores)('the dashboard in Chromium, $name job store', ({ name, options }) => {
  let sender: Sender;
  let baseUrl: string;
  let receiver: FlakyReceiver;

  beforeAll(async () => {
    ({ sender, baseUrl } = await startTestSender({ redeliverCooldownMs: 0, ...options() }));
    receiver = await startFlakyReceiver(sender.publicKeyPem);
  });
  afterAll(async () => {
    await sender?.close();
    await receiver?.close();
  });

  test('the page is served under a strict CSP and holds no secret', async () => {
    const res = await fetch(`${baseUrl}/dashboard/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("default-src 'self'");
    expect(DASHBOARD_CSP).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script
    for (const token of Object.values(TOKENS)) expect(html).not.toContain(token);
    expect((await fetch(`${baseUrl}/`, { redirect: 'manual' })).headers.get('location')).toBe('/dashboard/');
  });

  test('submit a job, watch it turn delivered after a retry, open its timeline, redeliver, see the duplicate answer', async () => {
    const problems: string[] = [];
    const page = await openWithKey(baseUrl, TOKENS.uncapped, problems);
    expect(await page.evaluate('sessionStorage.getItem("jobhook.apiKey")')).toBe(TOKENS.uncapped);

    // Started without dashboardReceiver: the form's receiver starts empty.
    expect(await page.getByTestId('receiver-url').inputValue()).toBe('');
    await page.getByTestId('receiver-url').fill(receiver.url);
    await page.getByTestId('submit-job').click();
    await expect.poll(() => page.getByTestId('submit-message').textContent()).toMatch(/^submitted /);
    const jobId = ((await page.getByTestId('submit-message').textContent()) ?? '').replace('submitted ', '');

    // It appears in the list, then turns delivered once the retry went through.
    const row = page.locator(`[data-testid=job-row][data-job-id="${jobId}"]`);
    await row.waitFor();
    await page.locator(`[data-testid=job-row][data-job-id="${jobId}"][data-delivery=delivered]`).waitFor();
    expect(receiver.answers).toEqual([500, 200]);

    await row.click();
    const detail = page.locator(`[data-testid=job-detail][data-job-id="${jobId}"]`);
    await detail.waitFor();
    await expect.poll(() => detail.getByTestId('timeline-attempt').count()).toBe(2);
    const attempts = detail.getByTestId('attempt-row');
    await expect.poll(() => attempts.count()).toBe(2);
    expect(await attempts.nth(0).getAttribute('data-outcome')).toBe('retry');
    expect(await attempts.nth(0).textContent()).toContain('500');
    expect(await attempts.nth(1).getAttribute('data-outcome')).toBe('delivered');
    expect(await attempts.nth(1).getByTestId('attempt-answer').textContent()).toBe(`{"ok":true,"job_id":"${jobId}","duplicate":false}`);
    // The webhook as sent: body with the job id, the signature header, the canonical form.
    await detail.getByTestId('webhook-body').waitFor();
    expect(await detail.getByTestId('webhook-body').textContent()).toContain(`"job_id": "${jobId}"`);
    expect(await detail.getByTestId('webhook-headers').textContent()).toMatch(/X-Service-Signature: [0-9a-f]{64,}/);
    expect(await detail.getByTestId('webhook-canonical').textContent()).toContain(`  "job_id": "${jobId}",\n`);
    await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-delivered.png`), fullPage: true });

    await detail.getByTestId('redeliver').click();
    await expect.poll(() => detail.getByTestId('detail-message').textContent()).toBe('redelivery round 1 started');
    await expect.poll(() => attempts.count()).toBe(3);
    await expect
      .poll(() => attempts.nth(2).getByTestId('attempt-answer').textContent())
      .toBe(`{"ok":true,"job_id":"${jobId}","duplicate":true}`);
    await expect.poll(() => detail.getByTestId('detail-delivery').textContent()).toBe('delivered, round 1');
    await expect.poll(() => detail.getByTestId('timeline-attempt').count()).toBe(3);
    // The totals redraw on the page's one-second poll, after the detail: waited for, not read once.
    await expect.poll(() => page.getByTestId('total-delivered').locator('.value').textContent()).toBe('1');
    await expect.poll(() => page.getByTestId('total-retried').locator('.value').textContent()).toBe('1');
    await expect.poll(() => page.getByTestId('total-attempts').locator('.value').textContent()).toBe('3');
    await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-redelivered.png`), fullPage: true });

    // Another organization's key sees none of it.
    const other = await openWithKey(baseUrl, TOKENS.globexInference, problems);
    await other.getByTestId('no-jobs').waitFor();
    expect(await other.locator(`[data-job-id="${jobId}"]`).count()).toBe(0);
    await other.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-other-organization.png`) });
    expect(problems).toEqual([]);
    await page.context().close();
    await other.context().close();
  });

  test('a delivery answered 401: the attempt names the key the webhook was signed with', async () => {
    // A receiver holding another public key than the sender's: it answers 401 unknown-key.
    const elsewhere = await startFlakyReceiver(readFileSync(DEMO_PUBLIC_KEY, 'utf8'), false);
    const problems: string[] = [];
    try {
      const submitted = await submitJob(baseUrl, TOKENS.uncapped, {
        model: 'ocr/ocr_async/google',
        input: {},
        webhook_receiver: elsewhere.url,
      });
      const jobId = submitted.json['job_id'] as string;
      const page = await openWithKey(baseUrl, TOKENS.uncapped, problems);
      const row = page.locator(`[data-testid=job-row][data-job-id="${jobId}"][data-delivery=rejected]`);
      await row.waitFor();
      expect(elsewhere.answers).toEqual([401]);
      await row.click();
      const attempt = page.locator(`[data-testid=job-detail][data-job-id="${jobId}"]`).getByTestId('attempt-row');
      await expect.poll(() => attempt.count()).toBe(1);
      expect(await attempt.textContent()).toContain('401');
      // The id in the form the receiver logs its own keys (`keyIdsTried`): hex SHA-256 of the SPKI DER.
      expect(await attempt.getByTestId('attempt-key-id').textContent()).toBe(`signed with key id ${sender.keyId}`);
      expect(sender.keyId).toBe(createKeyRing(sender.publicKeyPem).keys[0]!.id);
      // ...set beside what the receiver logged: the one key it holds, another one.
      expect(elsewhere.logs).toEqual([
        expect.objectContaining({
          status: 401,
          cause: 'unknown-key',
          keyIdsTried: [createKeyRing(readFileSync(DEMO_PUBLIC_KEY)).keys[0]!.id],
        }),
      ]);
      expect(sender.keyId).not.toBe(createKeyRing(readFileSync(DEMO_PUBLIC_KEY)).keys[0]!.id);
      await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-401-key-id.png`), fullPage: true });
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      await elsewhere.close();
    }
  });

  test('a failing test job from the form, and the list filters', async () => {
    const problems: string[] = [];
    const page = await openWithKey(baseUrl, TOKENS.uncapped, problems);
    await page.getByTestId('outcome').selectOption('fail');
    await page.locator('input[name=error_code]').fill('provider_timeout');
    await page.getByTestId('submit-job').click();
    await expect.poll(() => page.getByTestId('submit-message').textContent()).toMatch(/^submitted /);
    const jobId = ((await page.getByTestId('submit-message').textContent()) ?? '').replace('submitted ', '');
    const row = page.locator(`[data-testid=job-row][data-job-id="${jobId}"]`);
    await row.locator('.s-fail').waitFor();
    expect(await row.getAttribute('data-delivery')).toBe('none');

    await page.getByTestId('filter-status').selectOption('fail');
    await expect.poll(() => page.getByTestId('job-row').count()).toBe(1);
    expect(await page.getByTestId('job-row').getAttribute('data-job-id')).toBe(jobId);
    await page.getByTestId('filter-status').selectOption('');
    await page.getByTestId('filter-delivery').selectOption('delivered');
    // The filtered list as it settles: the page may draw the old list, or an empty one while the
    // new page loads; what it settles on has rows, every one delivered, and not the failed job.
    const filtered = async () => {
      const rows = await page
        .getByTestId('job-row')
        .evaluateAll((all) => all.map((r) => [r.getAttribute('data-job-id'), r.getAttribute('data-delivery')]));
      return { rows: rows.length > 0, failedShown: rows.some(([id]) => id === jobId), deliveries: [...new Set(rows.map(([, d]) => d))] };
    };
    await expect.poll(filtered).toEqual({ rows: true, failedShown: false, deliveries: ['delivered'] });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  test('a 403 refusal and an unreachable receiver: counted apart, and a timeline whose labels never overlap', async () => {
    // One receiver refuses every webhook (403); the other address has nothing listening.
    const refusing = createServer((_req, res) => void res.writeHead(403, { 'content-type': 'text/plain' }).end('not ours'));
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const problems: string[] = [];
    try {
      // The other organization: its counts hold these two jobs only.
      const submit = async (url: string): Promise<string> => {
        const answer = await submitJob(baseUrl, TOKENS.globexInference, {
          model: 'ocr/ocr_async/google',
          input: {},
          webhook_receiver: url,
        });
        expect(answer.status).toBe(201);
        return answer.json['job_id'] as string;
      };
      const refusedId = await submit(`http://127.0.0.1:${(refusing.address() as { port: number }).port}/hooks`);
      const failedId = await submit(`http://127.0.0.1:${closedPort}/hooks`);
      const page = await openWithKey(baseUrl, TOKENS.globexInference, problems);
      await page.locator(`[data-testid=job-row][data-job-id="${refusedId}"][data-delivery=rejected]`).waitFor();
      await page.locator(`[data-testid=job-row][data-job-id="${failedId}"][data-delivery=failed]`).waitFor();
      const total = (name: string) => page.getByTestId(`total-${name}`);
      await expect.poll(() => total('failed').locator('.value').textContent()).toBe('1');
      await expect.poll(() => total('refused').locator('.value').textContent()).toBe('1');
      expect(await total('refused').locator('.name').textContent()).toBe('refused (4xx)');
      expect(await total('failed').locator('.name').textContent()).toBe('failed (network/5xx)');

      // Each job's timeline: every round label clear of every status label.
      const overlaps = async (jobId: string) => {
        await page.locator(`[data-testid=job-row][data-job-id="${jobId}"]`).click();
        const detail = page.locator(`[data-testid=job-detail][data-job-id="${jobId}"]`);
        await detail.getByTestId('timeline-status').first().waitFor();
        // Found and read in one synchronous step inside the page, from its body (never redrawn): the
        // detail redraws every second, so a detail element found by one call may be a detached
        // copy, all zero boxes, by the next.
        const { labels, statuses, text, timeline } = await page.locator('body').evaluate((body, id) => {
          const root = body.querySelector(`[data-testid=job-detail][data-job-id="${id}"]`);
          const rects = (testId: string) =>
            [...(root?.querySelectorAll(`[data-testid=${testId}]`) ?? [])].map((el) => {
              const r = el.getBoundingClientRect();
              return { x: r.x, y: r.y, width: r.width, height: r.height };
            });
          const status = [...(root?.querySelectorAll('[data-testid=timeline-status]') ?? [])].map((el) => el.textContent ?? '');
          const [timeline] = rects('timeline');
          return { labels: rects('timeline-round-label'), statuses: rects('timeline-status'), text: status, timeline };
        }, jobId);
        const hit = labels.flatMap((l) =>
          statuses.filter((st) => l.x < st.x + st.width && st.x < l.x + l.width && l.y < st.y + st.height && st.y < l.y + l.height),
        );
        expect(timeline?.width, 'the job detail shows its timeline').toBeGreaterThan(0);
        // A clip of the page where the timeline is, not an element shot (the element may be redrawn meanwhile).
        await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-timeline-${text[0]}.png`), clip: timeline! });
        return { labels: labels.length, statuses: text, overlapping: hit.length };
      };
      expect(await overlaps(refusedId)).toEqual({ labels: 1, statuses: ['403'], overlapping: 0 });
      await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-403-timeline.png`), fullPage: true });
      const failed = await overlaps(failedId);
      expect(failed.overlapping).toBe(0);
      expect(failed.statuses.length).toBeGreaterThan(1);
      expect(new Set(failed.statuses)).toEqual(new Set(['ECONNREFUSED']));
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });

  test('a refused key is said so and not kept', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${baseUrl}/dashboard/`);
    await page.getByTestId('api-key').fill('acme_inf_notAKeyNotAKeyNot001');
    await page.getByTestId('use-key').click();
    await expect.poll(() => page.getByTestId('key-message').textContent()).toMatch(/^The key was refused: /);
    expect(await page.evaluate('sessionStorage.getItem("jobhook.apiKey")')).toBeNull();
    await context.close();
  });
});

/** `GET …/counts` as the test reads it, to compare with what the page shows. */
interface Counts {
  jobs: number;
  delivery: Record<'pending' | 'delivered' | 'rejected' | 'failed' | 'none', number>;
}

describe.each(stores)('the dashboard past one page, $name job store', ({ name, options }) => {
  let sender: Sender;
  let baseUrl: string;
  let receiver: FlakyReceiver;
  /** Job ids in the order they were submitted (oldest first). */
  const submitted: string[] = [];
  /** A receiver URL longer than the column, told apart from another only by its end. */
  let longReceiver: string;
  const JOBS = 62;

  beforeAll(async () => {
    // The receiver first (the sender is started with its URL), verifying with the key pair every
    // test sender signs with (startTestSender: createTestKeyPair, one per process).
    receiver = await startFlakyReceiver(createTestKeyPair().publicKeyPem);
    ({ sender, baseUrl } = await startTestSender({ redeliverCooldownMs: 0, dashboardReceiver: receiver.url, ...options() }));
    longReceiver = `${receiver.url}?tenant=acme-industries-europe-west&route=speech-to-text/transcripts/long-running/${'x'.repeat(40)}-end`;
    for (let i = 0; i < JOBS; i++) {
      const body: Record<string, unknown> = { model: 'ocr/ocr_async/google', input: i % 9 === 4 ? { simulate: { outcome: 'fail' } } : {} };
      if (i === JOBS - 1 || i === JOBS - 2) body['webhook_receiver'] = longReceiver;
      const answer = await submitJob(baseUrl, TOKENS.uncapped, body);
      expect(answer.status).toBe(201);
      submitted.push(answer.json['job_id'] as string);
    }
  });
  afterAll(async () => {
    await sender?.close();
    await receiver?.close();
  });

  test('job ids, whole receivers, a form that starts with the receiver, paging past 50 jobs, totals over all of them', async () => {
    const problems: string[] = [];
    const page = await openWithKey(baseUrl, TOKENS.uncapped, problems);

    // The form starts with the receiver the sender was started with (dashboardReceiver).
    expect(await page.getByTestId('receiver-url').inputValue()).toBe(receiver.url);

    // First page: the 50 newest, each row with its whole job id.
    const rows = page.getByTestId('job-row');
    await expect.poll(() => rows.count()).toBe(50);
    const newest = submitted.at(-1)!;
    const idCell = page.locator(`[data-testid=job-row][data-job-id="${newest}"] [data-testid=job-id]`);
    expect(await idCell.textContent()).toBe(newest);
    expect(await idCell.isVisible()).toBe(true);
    expect(await idCell.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);

    // The whole receiver URL is in the cell, visible without scrolling the list, and in its title.
    const receiverCell = page.locator(`[data-testid=job-row][data-job-id="${newest}"] [data-testid=job-receiver]`);
    expect(await receiverCell.textContent()).toBe(longReceiver);
    expect(await receiverCell.getAttribute('title')).toBe(longReceiver);
    expect(await receiverCell.evaluate((el) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight)).toBe(true);
    expect(await page.locator('#jobs').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    const box = await receiverCell.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(1400);

    // Older: the 12 oldest, the very first job among them; no page older than that.
    expect(await page.locator(`[data-job-id="${submitted[0]}"]`).count()).toBe(0);
    expect(await page.getByTestId('page-newer').isDisabled()).toBe(true);
    await page.getByTestId('page-older').click();
    await expect.poll(() => page.getByTestId('page-info').textContent()).toBe(`page 2 · ${JOBS - 50} jobs of ${JOBS}`);
    await expect.poll(() => rows.count()).toBe(JOBS - 50);
    const shown = await rows.evaluateAll((all) => all.map((r) => r.getAttribute('data-job-id')));
    expect(shown).toEqual(submitted.slice(0, JOBS - 50).reverse());
    expect(await page.getByTestId('page-older').isDisabled()).toBe(true);
    // ...and back.
    await page.getByTestId('page-newer').click();
    await expect.poll(() => page.getByTestId('page-info').textContent()).toBe(`page 1 · 50 jobs of ${JOBS}`);
    await page.locator(`[data-testid=job-row][data-job-id="${newest}"]`).waitFor();

    // Totals over all the jobs, not the 50 loaded: the counts API's figures, once the deliveries settled.
    const counts = async (): Promise<Counts> =>
      (await fetch(`${baseUrl}/v3/universal-ai/async/counts`, { headers: bearer(TOKENS.uncapped) })).json() as Promise<Counts>;
    await expect.poll(async () => (await counts()).delivery.pending, { timeout: 15_000 }).toBe(0);
    const all = await counts();
    expect(all.jobs).toBe(JOBS);
    const total = (name: string) => page.getByTestId(`total-${name}`).locator('.value').textContent();
    await expect.poll(() => total('delivered')).toBe(String(all.delivery.delivered));
    expect(all.delivery.delivered).toBe(2);
    expect(await total('jobs')).toBe(String(JOBS));
    expect(await total('failed')).toBe(String(all.delivery.failed));
    expect(await total('refused')).toBe(String(all.delivery.rejected));
    expect(await total('pending')).toBe('0');
    // What only the loaded jobs' attempts tell is labelled as this page's.
    expect(await page.getByTestId('totals-page').textContent()).toContain('this page');

    // A job from the prefilled form goes to that receiver, and shows on the first page.
    await page.getByTestId('page-older').click();
    await expect.poll(() => page.getByTestId('page-info').textContent()).toMatch(/^page 2 /);
    await page.getByTestId('submit-job').click();
    await expect.poll(() => page.getByTestId('submit-message').textContent()).toMatch(/^submitted /);
    const jobId = ((await page.getByTestId('submit-message').textContent()) ?? '').replace('submitted ', '');
    const row = page.locator(`[data-testid=job-row][data-job-id="${jobId}"]`);
    await row.waitFor();
    expect(await row.getByTestId('job-receiver').textContent()).toBe(receiver.url);
    await expect.poll(() => total('jobs')).toBe(String(JOBS + 1));
    await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-paged.png`), fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
