// The trust guide (docs/trust.md) runs as pasted against `jobhook serve`: its blocks, found by their
// `<!-- guide:trust:<name> -->` markers, are run as written (the service's command and the shell lines
// with bash, `receiver.mjs` and `submit.mjs` written from their blocks) in a folder of the repository
// (so `npx jobhook` and the packages resolve as in a project that installed them), with only the
// ports moved to free ones and the two keys pasted from the service's banner, as the guide says.
// Checked as a user would: the first organization's tagged job is delivered to `http://localhost:…`
// (the service accepts and pins that name) and handled once, its redelivery not handled again; the
// second organization's job aimed at the same receiver is answered 403 once (never retried) and never
// handled. Needs the packages built (`npx tsc -b`).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../packages/core/test/helpers/redis-server.js';
import { assertBuilt, REPO_ROOT } from '../helpers/chaos-cluster.js';
import { createSenderApi, type DeliveriesView } from '../helpers/e2e-sender-api.js';
import { waitUntil } from '../helpers/e2e-wait.js';

const GUIDE = join(REPO_ROOT, 'docs/trust.md');
const WAIT_MS = 30_000;
const run = promisify(execFile);

/** A bash process in a process group of its own, with what it printed so far. */
interface Shell {
  child: ChildProcess;
  out: string;
  err: string;
  exited: boolean;
}

let work: string;
const shells: Shell[] = [];

/** The code block right after `<!-- guide:trust:<name> -->`; exactly one. */
function block(name: string): string {
  const text = readFileSync(GUIDE, 'utf8');
  const found = [...text.matchAll(new RegExp(`^<!-- guide:trust:${name} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))];
  expect(found.length, `one guide:trust:${name} block in docs/trust.md`).toBe(1);
  return found[0]![1]!;
}

/** `text` with each [from, to] replaced everywhere; a `from` the text lacks fails (the guide moved on). */
function substitute(text: string, pairs: readonly (readonly [string | RegExp, string])[]): string {
  let out = text;
  for (const [from, to] of pairs) {
    expect(typeof from === 'string' ? out.includes(from) : from.test(out), `the guide's block holds ${String(from)}`).toBe(true);
    out = typeof from === 'string' ? out.split(from).join(to) : out.replace(new RegExp(from.source, `${from.flags.replace('g', '')}g`), to);
  }
  return out;
}

/** Starts `script` with bash in the work folder, in a process group of its own (what it backgrounds goes down with it). */
function shell(script: string, env: NodeJS.ProcessEnv = {}): Shell {
  const child = spawn('bash', ['-c', script], { cwd: work, detached: true, env: { ...process.env, ...env } });
  const sh: Shell = { child, out: '', err: '', exited: false };
  child.stdout!.on('data', (chunk: Buffer) => (sh.out += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (sh.err += chunk.toString('utf8')));
  child.once('exit', () => (sh.exited = true));
  shells.push(sh);
  return sh;
}

function killGroups(): void {
  for (const sh of shells) {
    try {
      if (sh.child.pid !== undefined) process.kill(-sh.child.pid, 'SIGTERM');
    } catch {
      // the group is gone already
    }
  }
}

beforeAll(() => {
  assertBuilt();
  work = join(REPO_ROOT, 'test/docs', `.guide-trust-${process.pid}`);
  mkdirSync(work, { recursive: true });
  process.once('exit', killGroups);
});

afterAll(async () => {
  killGroups();
  await Promise.all(shells.filter((sh) => !sh.exited).map((sh) => new Promise((resolve) => sh.child.once('exit', resolve))));
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
  const service = shell(substitute(block('serve'), [[/\b8080\b/, String(servicePort)]]));
  const banner = await waitUntil(
    () => {
      if (service.out.includes('Stop with')) return service.out;
      if (service.exited) throw new Error(`jobhook serve exited before its banner:\n${service.out}\n${service.err}`);
      return undefined;
    },
    { timeoutMs: WAIT_MS, what: () => `the service's banner; so far:\n${service.out}\n${service.err}` },
  );
  const field = (name: string): string => {
    const value = new RegExp(`${name}:\\s+(\\S+)`).exec(banner)?.[1];
    if (value === undefined) throw new Error(`no '${name}' in the banner:\n${banner}`);
    return value;
  };
  const [devKey, otherKey] = [field('inference key'), field('other org key')];
  expect(otherKey).not.toBe(devKey);

  // Terminal 2: the keys pasted where the guide says, then its lines as written; the two job ids shown at the end.
  const runBlock = substitute(block('run'), [
    [/^export JOBHOOK_API_KEY=jh_inf_…/m, `export JOBHOOK_API_KEY=${devKey}`],
    [/^OTHER_KEY=jh_inf_…/m, `OTHER_KEY=${otherKey}`],
    ...receiverPorts,
  ]);
  const terminal = shell(
    [runBlock, substitute(block('foreign'), ports), 'echo "JOB_ID=$JOB_ID"; echo "FOREIGN_JOB_ID=$FOREIGN_JOB_ID"', 'wait', ''].join('\n'),
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
  expect(await answer(theirsLine)).toMatchObject({ job_id: ids.theirs, delivery: 'rejected', attempts: [{ status_code: 403 }] });
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
