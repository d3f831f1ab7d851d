// The trust guide (docs/trust.md) runs as pasted against `jobhook serve`: its blocks, found by their
// `<!-- guide:trust:<name> -->` markers, are run as written (the service's command and the shell lines
// with bash, `receiver.mjs` and `submit.mjs` written from their blocks) in a folder of the repository
// (so `npx jobhook` and the packages resolve as in a project that installed them), with only the
// ports moved to free ones and the two keys pasted from the service's banner, as the guide says.
// Checked as a user would: the first organization's tagged job is delivered to `http://localhost:…`
// (the service accepts and pins that name) and handled once, its redelivery not handled again; the
// second organization's job aimed at the same receiver is answered 403 once (never retried) and never
// handled. Needs the packages built (`npx tsc -b`).
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../packages/core/test/helpers/redis-server.js';
import { assertBuilt, REPO_ROOT } from '../helpers/chaos-cluster.js';
import { createSenderApi, type DeliveriesView } from '../helpers/e2e-sender-api.js';
import { waitUntil } from '../helpers/e2e-wait.js';
import { createShells, guideBlock, serveBanner, substitute } from '../helpers/guide-blocks.js';

const GUIDE = join(REPO_ROOT, 'docs/trust.md');
const WAIT_MS = 30_000;
const run = promisify(execFile);
const block = (name: string): string => guideBlock(GUIDE, `guide:trust:${name}`);
const shells = createShells();
let work: string;

beforeAll(() => {
  assertBuilt();
  work = join(REPO_ROOT, 'test/docs', `.guide-trust-${process.pid}`);
  mkdirSync(work, { recursive: true });
});

afterAll(async () => {
  await shells.stop();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

test("the trust guide as pasted: the other organization's job is refused 403, ours (tagged, at localhost) handled once", async () => {
  const [servicePort, receiverPort] = [await freePort(), await freePort()];
  const ports: [RegExp, string][] = [
    [/\b8080\b/, String(servicePort)],
    [/\b3000\b/, String(receiverPort)],
  ];
  const receiverPorts: [RegExp, string][] = [[/\b3000\b/, String(receiverPort)]];
  writeFileSync(join(work, 'receiver.mjs'), substitute(block('receiver'), receiverPorts));
  writeFileSync(join(work, 'submit.mjs'), substitute(block('submit'), ports));

  // Terminal 1: the service, with its defaults (two organizations, the state folder in the work folder).
  const service = shells.start(substitute(block('serve'), [[/\b8080\b/, String(servicePort)]]), work);
  const field = await serveBanner(service, WAIT_MS);
  const [devKey, otherKey] = [field('inference key'), field('other org key')];
  expect(otherKey).not.toBe(devKey);

  // Terminal 2: the keys pasted where the guide says, then its lines as written; the two job ids shown at the end.
  const runBlock = substitute(block('run'), [
    [/^export JOBHOOK_API_KEY=jh_inf_…/m, `export JOBHOOK_API_KEY=${devKey}`],
    [/^OTHER_KEY=jh_inf_…/m, `OTHER_KEY=${otherKey}`],
    ...receiverPorts,
  ]);
  const terminal = shells.start(
    [runBlock, substitute(block('foreign'), ports), 'echo "JOB_ID=$JOB_ID"; echo "FOREIGN_JOB_ID=$FOREIGN_JOB_ID"', 'wait', ''].join('\n'),
    work,
  );
  const ids = await waitUntil(
    () => {
      const ours = /^JOB_ID=(\S+)$/m.exec(terminal.out)?.[1];
      const theirs = /^FOREIGN_JOB_ID=(\S+)$/m.exec(terminal.out)?.[1];
      if (ours !== undefined && theirs !== undefined) return { ours, theirs };
      if (terminal.exited) throw new Error(`the guide's lines ended early:\n${terminal.out}\n${terminal.err}`);
      return undefined;
    },
    { timeoutMs: WAIT_MS, what: () => `both job ids; so far:\n${terminal.out}\n${terminal.err}` },
  );

  const baseUrl = `http://127.0.0.1:${servicePort}`;
  const [dev, other] = [createSenderApi(baseUrl, devKey), createSenderApi(baseUrl, otherKey)];
  const hookUrl = `http://localhost:${receiverPort}/webhooks/jobs`;
  const ours = await dev.waitForFinalDelivery(ids.ours, WAIT_MS);
  // `localhost` was accepted at submission and delivered to.
  expect(ours.delivery, JSON.stringify(ours)).toBe('delivered');
  expect(ours.attempts.at(-1)).toMatchObject({ url: hookUrl, status_code: 200 });
  const theirs = await other.waitForFinalDelivery(ids.theirs, WAIT_MS);
  expect(theirs.delivery, JSON.stringify(theirs)).toBe('rejected');
  expect(theirs.attempts.map((a) => [a.url, a.status_code])).toEqual([[hookUrl, 403]]); // a 4xx: never retried
  expect(terminal.err).toContain('ERR_RECIPIENT_TAG_MISSING'); // the receiver's warning

  // The guide's check lines, each as written, in the same shell variables.
  const env = { JOBHOOK_API_KEY: devKey, OTHER_KEY: otherKey, JOB_ID: ids.ours, FOREIGN_JOB_ID: ids.theirs };
  const [oursLine, theirsLine, redeliverLine] = substitute(block('check'), [[/\b8080\b/, String(servicePort)]])
    .trim()
    .split('\n');
  const answer = async (line: string | undefined): Promise<unknown> => {
    const { stdout } = await run('bash', ['-c', line!], { cwd: work, env: { ...process.env, ...env } });
    return JSON.parse(stdout);
  };
  expect(await answer(oursLine)).toMatchObject({ job_id: ids.ours, delivery: 'delivered', attempts: [{ status_code: 200 }] });
  expect(await answer(theirsLine)).toMatchObject({
    job_id: ids.theirs,
    delivery: 'rejected',
    attempts: [{ status_code: 403, response_body: { error: { code: 'ERR_RECIPIENT_REFUSED' } } }],
  });
  expect(await answer(redeliverLine)).toMatchObject({ round: 1 });
  const again = await waitUntil(
    async () => {
      const view: DeliveriesView = await dev.deliveries(ids.ours);
      return view.round === 1 && view.delivery !== 'pending' ? view : undefined;
    },
    { timeoutMs: WAIT_MS, what: () => `the redelivery of ${ids.ours}` },
  );
  expect(again.attempts.map((a) => a.status_code)).toEqual([200, 200]);

  // Handled once, with the parameters as submitted (the tag taken out); the foreign job never.
  const handled = terminal.out.split('\n').filter((line) => line.startsWith('handled '));
  expect(handled).toEqual([`handled ${ids.ours} success {"order_id":"A-1001"}`]);
});
