import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isJobhookError, type Logger } from '@jobhook/core';
import { redactUrl } from '@jobhook/core/internal';
import type { Sender, SenderOptions } from '@jobhook/sender';
import { defineCommand, UsageError } from '../command.js';
import { CliError } from '../errors.js';
import { readFileArg, write, type CliIo } from '../io.js';
import { BODY_STYLES, choiceFlag, cidrFlag, integerFlag, wholeNumberFlag } from './flag-values.js';

/** The sender's whole-number options and their flags: passed on only when given. */
const NUMBER_FLAGS: ReadonlyArray<readonly [keyof SenderOptions, string]> = [
  ['attemptTimeoutMs', '--attempt-timeout-ms'],
  ['retryBaseMs', '--retry-base-ms'],
  ['maxRetryDelayMs', '--max-retry-delay-ms'],
  ['maxRetries', '--max-retries'],
  ['jobDelayMs', '--job-delay-ms'],
  ['queueLockMs', '--queue-lock-ms'],
  ['maxCanonicalBytes', '--max-canonical-bytes'],
  ['redeliverCooldownMs', '--redeliver-cooldown-ms'],
  ['maxRedeliveries', '--max-redeliveries'],
  ['maxStoredJobs', '--max-stored-jobs'],
  ['maxStoredJobBytes', '--max-stored-job-bytes'],
  ['storedJobTtlMs', '--stored-job-ttl-ms'],
  ['requestTimeoutMs', '--request-timeout-ms'],
  ['headersTimeoutMs', '--headers-timeout-ms'],
  ['keepAliveTimeoutMs', '--keep-alive-timeout-ms'],
  ['connectionTimeoutMs', '--connection-timeout-ms'],
];

/** Sender option names as their flags, so a refusal by `createSender` names what the user typed. */
const FLAG_OF_OPTION: ReadonlyMap<string, string> = new Map([
  ...NUMBER_FLAGS,
  ['bodyStyle', '--body-style'],
  ['apiKeys', '--api-key'],
  ['receiverAllowlist', '--allow-receiver'],
  ['privateKey', '--private-key'],
  ['stateDir', '--state-dir'],
  ['publicKeyFile', '--public-key-out'],
  ['redisUrl', '--redis'],
  ['accounts', '--config'],
  ['dashboardReceiver', '--dashboard-receiver'],
]);

/** `jobhook serve`: the reference service on a port, until SIGINT or SIGTERM. */
export const serveCommand = defineCommand({
  name: 'serve',
  summary: 'Run the reference service: the /v3 API, simulated async jobs and signed webhook delivery.',
  synopsis: [
    'serve [--port 8080] [--host 127.0.0.1] [--state-dir .jobhook | --ephemeral] [--config FILE] [--api-key KEY ...] [--private-key FILE] [options]',
  ],
  flags: [
    ['--port N', 'port to listen on, 0 for any free one (default 8080)'],
    ['--host HOST', 'address to listen on (default 127.0.0.1; 0.0.0.0 in a container)'],
    ['--state-dir DIR', 'keeps the signing key and the dev accounts across restarts (default .jobhook, created 0700)'],
    ['--ephemeral', 'keep nothing: a new key and new dev keys per run, the public key in a temp file'],
    ['--config FILE', 'accounts file (organizations, members, keys); default two dev organizations with printed keys'],
    ['--api-key KEY', 'an extra inference key of the first organization with 1000 credits; repeatable'],
    ['--private-key FILE', "webhook signing key, PEM; default the state folder's (made on the first run)"],
    ['--public-key-out FILE', 'where to write the public key (SPKI PEM; replaced); default service-public.pem'],
    ['--redis URL', 'redis:// URL: jobs and credits in Redis, deliveries in BullMQ; default memory'],
    ['--body-style STYLE', 'webhook body layout: python (default), canonical or compact'],
    ['--attempt-timeout-ms MS', 'deadline of one delivery attempt (default 30000)'],
    ['--retry-base-ms MS', 'delay before the first retry, then doubled with jitter (default 1000)'],
    ['--max-retry-delay-ms MS', 'longest delay between attempts (default 30000)'],
    ['--max-retries N', 'retries after the first attempt (default 3)'],
    ['--allow-insecure-receivers', 'accept http:// webhook receivers'],
    ['--allow-private-receivers', 'accept receivers on loopback, private and other non-public addresses'],
    ['--allow-receiver CIDR', 'accept receivers in this non-public range, e.g. 127.0.0.0/8 (localhost too, pinned there); repeatable'],
    ['--job-delay-ms MS', 'processing time of a job without input.simulate.delay_ms (default 100)'],
    ['--queue-lock-ms MS', "with --redis: a dead sender's running task is taken over after this (default 30000)"],
    [
      '--max-canonical-bytes N',
      "refuse (413) a job whose webhook payload's canonical form may exceed this (default 16777216, the receivers' default)",
    ],
    ['--redeliver-cooldown-ms MS', 'shortest time between two redelivers of one job, 429 meanwhile; 0 for none (default 10000)'],
    ['--max-redeliveries N', 'most redeliveries of one job, 409 after (default 20)'],
    ['--max-stored-jobs N', 'without --redis: most jobs kept in memory; full of unfinished ones, submissions get 503 (default 10000)'],
    [
      '--max-stored-job-bytes N',
      'without --redis: most bytes of jobs and delivery logs kept in memory, at least 1048576 (default 268435456)',
    ],
    ['--stored-job-ttl-ms MS', 'without --redis: a finished job is forgotten (404) this long after it finished (default 86400000)'],
    ['--request-timeout-ms MS', 'a request (headers and body) must arrive within this, else 408 (default 30000)'],
    ['--headers-timeout-ms MS', "a request's headers must arrive within this, at most --request-timeout-ms (default 10000)"],
    ['--keep-alive-timeout-ms MS', 'an idle keep-alive connection is closed after this (default 5000)'],
    ['--connection-timeout-ms MS', 'a connection without traffic either way for this long is closed (default 60000)'],
    ['--no-dashboard', 'serve no web page (by default /dashboard/ shows jobs, attempts, payloads and redeliver)'],
    ['--dashboard-receiver URL', "the receiver URL the page's test-job form starts with (default empty)"],
    ['--verbose', 'log jobs and delivery attempts to stderr, one JSON line each'],
  ],
  notes: [
    'Prints the base URL, the queue, the public key file, the signing key id and (without --config) the\n' +
      "dev keys: organization dev's inference and management keys, organization other's inference key; then\n" +
      'serves until SIGINT (Ctrl-C) or SIGTERM: it stops taking requests, lets running deliveries finish,\n' +
      'and exits 0. A second signal exits at once (1).',
    'The state folder (--state-dir, default .jobhook in the working directory, with a .gitignore of *) keeps\n' +
      'signing-key.pem and accounts.json (0600): a restart signs with the same key and takes the same API\n' +
      'keys, so running receivers and clients keep working. --private-key and --config take precedence (not\n' +
      'written). The public key goes to service-public.pem in the working directory (--public-key-out FILE\n' +
      'elsewhere). --ephemeral keeps nothing: a temp public key file, removed on exit.',
    'GET /metrics answers the delivery metrics in Prometheus text format (attempts by result, their\n' +
      'durations), without a bearer token.',
    'Exit 2 for a command-line mistake (the message names the flag), an unusable key or accounts file,\n' +
      'a port that cannot be listened on, an unreachable Redis, or @jobhook/sender (the reference service, an\n' +
      'optional peer of @jobhook/cli) not installed: npm i @jobhook/sender.',
  ],
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    config: { type: 'string' },
    'api-key': { type: 'string', multiple: true },
    'private-key': { type: 'string' },
    'public-key-out': { type: 'string' },
    'state-dir': { type: 'string' },
    ephemeral: { type: 'boolean' },
    redis: { type: 'string' },
    'body-style': { type: 'string' },
    'attempt-timeout-ms': { type: 'string' },
    'retry-base-ms': { type: 'string' },
    'max-retry-delay-ms': { type: 'string' },
    'max-retries': { type: 'string' },
    'allow-insecure-receivers': { type: 'boolean' },
    'allow-private-receivers': { type: 'boolean' },
    'allow-receiver': { type: 'string', multiple: true },
    'job-delay-ms': { type: 'string' },
    'queue-lock-ms': { type: 'string' },
    'max-canonical-bytes': { type: 'string' },
    'redeliver-cooldown-ms': { type: 'string' },
    'max-redeliveries': { type: 'string' },
    'max-stored-jobs': { type: 'string' },
    'max-stored-job-bytes': { type: 'string' },
    'stored-job-ttl-ms': { type: 'string' },
    'request-timeout-ms': { type: 'string' },
    'headers-timeout-ms': { type: 'string' },
    'keep-alive-timeout-ms': { type: 'string' },
    'connection-timeout-ms': { type: 'string' },
    'no-dashboard': { type: 'boolean' },
    'dashboard-receiver': { type: 'string' },
    verbose: { type: 'boolean' },
  },
  maxPositionals: 0,
  async execute(values, _positionals, io: CliIo): Promise<number> {
    const cmd = serveCommand;
    const port = integerFlag(cmd, '--port', values.port, { min: 0, max: 65535, fallback: 8080 });
    const host = values.host ?? '127.0.0.1';
    if (host.trim() === '') throw new UsageError('--host must not be empty', cmd);
    // Only the flags given: createSender applies its own defaults and checks every range (one source
    // of truth); its refusals come back naming the flag (startSender).
    const options: SenderOptions = {
      ...(values['body-style'] === undefined
        ? {}
        : { bodyStyle: choiceFlag(cmd, '--body-style', values['body-style'], BODY_STYLES, 'python') }),
      allowInsecureReceivers: values['allow-insecure-receivers'] === true,
      allowPrivateReceivers: values['allow-private-receivers'] === true,
      receiverAllowlist: (values['allow-receiver'] ?? []).map((cidr) => cidrFlag(cmd, '--allow-receiver', cidr)),
      apiKeys: values['api-key'] ?? [],
      dashboard: values['no-dashboard'] !== true,
      ...(values['dashboard-receiver'] === undefined ? {} : { dashboardReceiver: values['dashboard-receiver'] }),
    };
    for (const [option, flag] of NUMBER_FLAGS) {
      const value = values[flag.slice(2) as keyof typeof values];
      if (typeof value === 'string') (options as Record<string, unknown>)[option] = wholeNumberFlag(cmd, flag, value);
    }
    // createSender checks the URL (its refusal comes back naming --redis, see startSender).
    if (values.redis !== undefined) options.redisUrl = values.redis;
    if (values.verbose === true) options.logger = jsonLineLogger(io);
    if (values['private-key'] !== undefined) options.privateKey = await readFileArg(values['private-key'], '--private-key');
    const ephemeral = values.ephemeral === true;
    if (values['state-dir']?.trim() === '') throw new UsageError('--state-dir must not be empty', cmd);
    if (ephemeral && values['state-dir'] !== undefined) throw new UsageError('--ephemeral keeps no state: leave out --state-dir', cmd);
    const { createSender, loadAccountsConfig } = await loadSender();
    if (values.config !== undefined) options.accounts = await loadAccountsConfig(values.config);
    // Without --ephemeral, what --private-key and --config do not give comes from the state folder.
    if (!ephemeral) options.stateDir = resolve(values['state-dir'] ?? DEFAULT_STATE_DIR);
    // A temp file only when nothing is kept and no file was asked for: its path changes each run.
    const tempDir = ephemeral && values['public-key-out'] === undefined ? await mkdtemp(join(tmpdir(), 'jobhook-serve-')) : undefined;
    const publicKeyFile =
      tempDir === undefined ? resolve(values['public-key-out'] ?? DEFAULT_PUBLIC_KEY_FILE) : join(tempDir, 'public.pem');
    options.publicKeyFile = publicKeyFile;
    const removeTemp = async (): Promise<void> => {
      if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    };

    let sender: Sender;
    try {
      sender = await startSender(() => createSender(options));
    } catch (err) {
      await removeTemp();
      throw err;
    }
    const cleanUp = async (): Promise<void> => {
      try {
        await sender.close();
      } finally {
        await removeTemp();
      }
    };
    let baseUrl: string;
    try {
      baseUrl = await sender.listen({ port, host }).catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
          throw new UsageError(`cannot listen on ${host}:${port} (--host, --port): ${(err as Error).message}`, cmd);
        }
        throw err;
      });
    } catch (err) {
      await cleanUp().catch(() => {});
      throw err;
    }

    const stopped = waitForStopSignal(io);
    // From here the sender listens: whatever happens (a failed banner write included), it is closed.
    try {
      const lines = [
        `jobhook serve: listening on ${baseUrl}`,
        `  queue:          ${options.redisUrl === undefined ? 'memory (jobs and deliveries are lost on exit)' : `redis ${redactUrl(options.redisUrl)}`}`,
        `  public key:     ${publicKeyFile}${tempDir === undefined ? '' : ' (removed on exit)'}`,
        // What a receiver answering 401 logs as keyIdsTried, to compare with.
        `  signing key id: ${sender.keyId}`,
        `  state:          ${describeState(options, values['private-key'] !== undefined)}`,
      ];
      if (sender.devKeys !== null) {
        lines.push(
          `  inference key:  ${sender.devKeys.inference}   (organization dev)`,
          `  management key: ${sender.devKeys.management}   (organization dev)`,
          `  other org key:  ${sender.devKeys.otherInference}   (organization other: another customer, for trying recipient tags)`,
        );
      }
      lines.push(
        `  receivers:      ${describeReceivers(options)}`,
        // Prometheus delivery counts; no bearer token, like a health check.
        `  metrics:        ${baseUrl}/metrics`,
        // The page asks for an API key (the inference key above) and keeps it in the tab.
        ...(options.dashboard === false ? [] : [`  dashboard:      ${baseUrl}/dashboard/`]),
        'Stop with Ctrl-C (SIGINT) or SIGTERM.',
      );
      await write(io.stdout, `${lines.join('\n')}\n`);

      const signal = await stopped;
      await write(io.stdout, `jobhook serve: ${signal}: stopping\n`);
    } finally {
      await cleanUp();
    }
    return 0;
  },
});

/** The state folder when --state-dir is not given: in the working directory, like `.git`. */
export const DEFAULT_STATE_DIR = '.jobhook';
/** Where the public key goes when --public-key-out is not given: the file the quickstarts read. */
export const DEFAULT_PUBLIC_KEY_FILE = 'service-public.pem';

/** The banner's `state:` line: where the key and the accounts come from. */
function describeState(options: SenderOptions, keyGiven: boolean): string {
  if (options.stateDir === undefined) return 'none (--ephemeral): a new signing key and new dev keys each run';
  const kept = [keyGiven ? undefined : 'signing key', options.accounts === undefined ? 'dev accounts' : undefined].filter(
    (part) => part !== undefined,
  );
  return kept.length === 0
    ? 'none needed (--private-key and --config given)'
    : `${options.stateDir} (${kept.join(' and ')}, kept across restarts)`;
}

/**
 * `@jobhook/sender`, imported when `serve` runs and never at the top of a module: it is an optional
 * peer (Fastify, BullMQ, ioredis), so the other commands install and start without it. Only the
 * package itself missing is `ERR_PACKAGE_MISSING`; a dependency missing inside an installed sender
 * is a broken install and stays an internal error with Node's message.
 */
async function loadSender(): Promise<typeof import('@jobhook/sender')> {
  try {
    return await import('@jobhook/sender');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes("package '@jobhook/sender'")) {
      throw new CliError(
        'ERR_PACKAGE_MISSING',
        'serve runs the reference service, @jobhook/sender, which is not installed; install it next to @jobhook/cli: npm i @jobhook/sender',
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * createSender, with its option refusals turned into usage errors naming the flag: the option at
 * the start of the message, and any other option it names (`maxRetryDelayMs (…) must be at least
 * retryBaseMs (…)`), read as their flags.
 */
async function startSender(create: () => Promise<Sender>): Promise<Sender> {
  try {
    return await create();
  } catch (err) {
    if (isJobhookError(err, 'ERR_OPTION_INVALID')) {
      const option = /^createSender: ([A-Za-z]+)/.exec(err.message)?.[1];
      const flag = option === undefined ? undefined : FLAG_OF_OPTION.get(option);
      // A file of the state folder, or the public key file, that cannot be read or written: a file
      // error naming the flag, its message (with the path) left as it is.
      const file = err.detail as { path?: unknown; access?: unknown } | undefined;
      if (flag !== undefined && typeof file?.path === 'string') {
        // A read-only working directory (a container) is the usual cause: say how to keep nothing.
        const hint = option === 'stateDir' ? ' (--state-dir DIR elsewhere, or --ephemeral to keep nothing)' : '';
        const message = `${flag}: ${err.message.replace(/^createSender: [A-Za-z]+: /, '')}${hint}`;
        throw new CliError(file.access === 'read' ? 'ERR_FILE_UNREADABLE' : 'ERR_FILE_UNWRITABLE', message, { cause: err });
      }
      if (flag !== undefined) {
        const detail = err.message
          .replace(/^createSender: /, '')
          .replace(/\b[a-z][A-Za-z]+\b/g, (word) => FLAG_OF_OPTION.get(word) ?? word);
        throw new UsageError(detail.startsWith(flag) ? detail : `${flag}: ${detail}`, serveCommand);
      }
    }
    throw err;
  }
}

/** Resolves with the signal's name on the first SIGINT or SIGTERM; a second one exits at once. */
function waitForStopSignal(io: CliIo): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // Closing waits for running deliveries (up to --attempt-timeout-ms): a second signal skips that.
      const force = (again: NodeJS.Signals): void => {
        io.stderr.write(`jobhook serve: ${again} again: exiting without waiting\n`);
        process.exit(1);
      };
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

function describeReceivers(options: SenderOptions): string {
  const parts = [options.allowInsecureReceivers === true ? 'http and https' : 'https only'];
  if (options.allowPrivateReceivers === true) parts.push('any address');
  else if ((options.receiverAllowlist ?? []).length > 0) parts.push(`public addresses and ${options.receiverAllowlist!.join(', ')}`);
  else parts.push('public addresses only');
  return parts.join(', ');
}

/** `--verbose`: the sender's pino-style logs as JSON lines on stderr (debug included). */
function jsonLineLogger(io: CliIo): Logger {
  const log =
    (level: string) =>
    (obj: object, msg?: string): void => {
      const fields = Object.fromEntries(
        Object.entries(obj).map(([k, v]) => [k, v instanceof Error ? { name: v.name, message: v.message } : v]),
      );
      const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }, (_k, v: unknown) =>
        typeof v === 'bigint' ? v.toString() : v,
      );
      io.stderr.write(`${line}\n`);
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
