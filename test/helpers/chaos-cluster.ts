// The processes of the chaos suite: example receivers and the `jobhook serve` sender as children,
// a fixed signing key pair, and a receiver kill that never lands while the receiver holds a claim.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisCommand } from '../../packages/core/test/helpers/redis-server.js';
import { spawnNode, type ManagedChild } from './chaos-processes.js';

/** The repository root. */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CLI_BIN = join(REPO_ROOT, 'packages/cli/bin/jobhook.js');
const FASTIFY_RECEIVER = join(REPO_ROOT, 'examples/fastify-receiver/server.mjs');

/** Fails with a clear message when the children would run stale or missing builds. */
export function assertBuilt(): void {
  const needed = [
    'packages/cli/dist/bin.js',
    'packages/sender/dist/index.js',
    'packages/fastify/dist/index.js',
    'packages/core/dist/index.js',
  ];
  const missing = needed.filter((file) => !existsSync(join(REPO_ROOT, file)));
  if (missing.length > 0)
    throw new Error(`the chaos suite runs the built packages; run \`npx tsc -b\` first (missing: ${missing.join(', ')})`);
}

/** Writes a new RSA-2048 key pair (PKCS#8 and SPKI PEM) into `dir`; the sender signs with it across restarts. */
export function writeSigningKeys(dir: string): { privateKeyFile: string; publicKeyFile: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const privateKeyFile = join(dir, 'sender.private.pem');
  const publicKeyFile = join(dir, 'sender.public.pem');
  writeFileSync(privateKeyFile, privateKey, { mode: 0o600 });
  writeFileSync(publicKeyFile, publicKey);
  return { privateKeyFile, publicKeyFile };
}

/** One `"msg":"job handled"` line of an example receiver. */
export interface HandledLine {
  receiver: string;
  jobId: string;
  status: string;
}

/** Options of {@link startExampleReceiver}. */
export interface ExampleReceiverOptions {
  name: string;
  port: number;
  redisUrl: string;
  publicKeyFile: string;
  onHandled: (line: HandledLine) => void;
}

/**
 * Starts examples/fastify-receiver/server.mjs on 127.0.0.1:`port` with the shared Redis store, and
 * reports each of its `job handled` log lines.
 */
export async function startExampleReceiver(options: ExampleReceiverOptions): Promise<ManagedChild> {
  const { child } = await spawnNode({
    name: options.name,
    args: [FASTIFY_RECEIVER],
    cwd: REPO_ROOT,
    env: {
      PORT: String(options.port),
      HOST: '127.0.0.1',
      JOBHOOK_PUBLIC_KEY: options.publicKeyFile,
      REDIS_URL: options.redisUrl,
      LOG_LEVEL: 'warn',
    },
    ready: /"msg":"listening"/,
    onLine(line) {
      if (!line.includes('"job handled"')) return;
      const entry = JSON.parse(line) as { job_id?: unknown; status?: unknown };
      if (typeof entry.job_id === 'string') {
        options.onHandled({ receiver: options.name, jobId: entry.job_id, status: String(entry.status) });
      }
    },
  });
  return child;
}

/** Options of {@link startSenderCli}: the flags of `jobhook serve`. */
export interface SenderCliOptions {
  port: number;
  redisUrl: string;
  privateKeyFile: string;
  apiKey: string;
  attemptTimeoutMs: number;
  retryBaseMs: number;
  maxRetries: number;
  jobDelayMs: number;
  /** Extra flags (e.g. `--queue-lock-ms 2000`). */
  extraArgs?: readonly string[];
  /** Every stderr line (`--verbose` logs). */
  onLog?: (line: string) => void;
}

/** Starts `jobhook serve` on the Redis queue and resolves with the child and its base URL. */
export async function startSenderCli(options: SenderCliOptions): Promise<{ child: ManagedChild; baseUrl: string }> {
  const args = [
    CLI_BIN,
    'serve',
    // No state folder: the suite starts several senders at once, each with the key it is given.
    '--ephemeral',
    '--port',
    String(options.port),
    '--host',
    '127.0.0.1',
    '--redis',
    options.redisUrl,
    '--private-key',
    options.privateKeyFile,
    '--api-key',
    options.apiKey,
    '--allow-insecure-receivers',
    '--allow-receiver',
    '127.0.0.0/8',
    '--attempt-timeout-ms',
    String(options.attemptTimeoutMs),
    '--retry-base-ms',
    String(options.retryBaseMs),
    '--max-retries',
    String(options.maxRetries),
    '--job-delay-ms',
    String(options.jobDelayMs),
    '--verbose',
    ...(options.extraArgs ?? []),
  ];
  const { child, ready } = await spawnNode({
    name: 'sender',
    args,
    cwd: REPO_ROOT,
    ready: /listening on (http:\/\/\S+)/,
    onLine(line, stream) {
      if (stream === 'stderr') options.onLog?.(line);
    },
  });
  return { child, baseUrl: ready[1]! };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Receiver idempotency keys (`jobhook:{<job id>}`) that are claimed (`c:<token>`), as `key=value`. */
async function heldClaims(redisPort: number): Promise<Set<string>> {
  const script = `local out = {}
for _, k in ipairs(redis.call('KEYS', ARGV[1])) do
  local v = redis.call('GET', k)
  if v and string.sub(v, 1, 2) == 'c:' then out[#out + 1] = k .. '=' .. v end
end
return out`;
  const reply = await redisCommand(redisPort, ['EVAL', script, '0', 'jobhook:{*'], 5000);
  if (!Array.isArray(reply)) throw new Error(`scanning the receiver claims failed: ${String(reply)}`);
  return new Set(reply.map(String));
}

/** How {@link killOutsideClaim} went. */
export interface ReceiverKill {
  /** Freeze rounds it took to find a moment without a claim held. */
  rounds: number;
  /** Claims the receiver still held when it was killed (0 unless every round found one). */
  claimsHeld: number;
}

/**
 * SIGKILLs a receiver with its requests in flight, but not while it holds a job's claim.
 *
 * Why: a receiver that dies between `claim` and `complete` keeps the job "in flight" for the
 * store's lease (20 s by default), and one that dies after its handler but before `complete` has
 * the job handled again after the lease: at-least-once, as documented, and tested on its own with
 * scaled-down times in test/e2e/receiver-crash.test.ts. This suite's fast retries (150 ms base)
 * would spend their budget within the lease, so such a kill is kept out of it. So the receiver is frozen (SIGSTOP) — requests keep arriving and queue
 * up — its claims are read from Redis; a claim still there after 100 ms is the frozen process's,
 * and it is let run (SIGCONT) a moment and frozen again. With no claim held, SIGKILL: every request
 * it had taken but not answered ends in a reset, which the sender must retry.
 */
export async function killOutsideClaim(child: ManagedChild, redisPort: number, maxRounds = 30): Promise<ReceiverKill> {
  let stuck: string[] = [];
  for (let round = 1; round <= maxRounds; round++) {
    child.signal('SIGSTOP');
    // Commands the process wrote before it froze reach Redis meanwhile.
    await sleep(50);
    const first = await heldClaims(redisPort);
    if (first.size > 0) {
      await sleep(100);
      const second = await heldClaims(redisPort);
      stuck = [...first].filter((claim) => second.has(claim));
    } else {
      stuck = [];
    }
    if (stuck.length === 0) {
      await child.kill();
      return { rounds: round, claimsHeld: 0 };
    }
    child.signal('SIGCONT');
    await sleep(20);
  }
  await child.kill();
  return { rounds: maxRounds, claimsHeld: stuck.length };
}
