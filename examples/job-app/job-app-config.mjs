// The job app's configuration from the environment, checked before anything connects: a missing or
// wrong setting stops the app at start with one line naming it (exit 2), never at the first request.
import { readFileSync } from 'node:fs';

/** Fewest characters of `JOB_APP_TOKEN`: shorter tokens are guessable. */
export const MIN_TOKEN_LENGTH = 16;
/** Default `JOB_APP_MAX_OUTSTANDING`: well above the 24 jobs in flight of test/chaos/job-app-chaos.test.ts. */
export const DEFAULT_MAX_OUTSTANDING = 100;
/** Default `METRICS_PORT` (the port Prometheus exporters usually take). */
export const DEFAULT_METRICS_PORT = 9464;

const README = 'see examples/job-app/README.md';

/**
 * Prints `job-app: <message>` on stderr and exits 2: a configuration mistake (a setting missing or
 * wrong, a port taken), said in one line rather than a stack trace.
 * @example stop('set JOB_APP_TOKEN');
 */
export function stop(message) {
  console.error(`job-app: ${message} (${README})`);
  process.exit(2);
}

function required(name) {
  const value = process.env[name];
  if (!value) stop(`set ${name}`);
  return value;
}

function wholeNumber(name, fallback, { min, max }) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || value < min || value > max)
    stop(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return value;
}

/** The service's public key: a missing file is named with what writes it, not a bare ENOENT. */
function readPublicKey(path) {
  try {
    return readFileSync(path);
  } catch (err) {
    if (err.code === 'ENOENT') {
      stop(
        `JOBHOOK_PUBLIC_KEY names ${path}, which does not exist: start the service first (jobhook serve --public-key-out ${path} writes it)`,
      );
    }
    stop(`cannot read JOBHOOK_PUBLIC_KEY ${path}: ${err.message}`);
  }
}

/**
 * Reads and checks every setting; exits 2 with a clear message on the first one missing or wrong.
 * @example const config = readConfig(); // { token, port, metricsPort, publicKeys, ... }
 */
export function readConfig() {
  const token = required('JOB_APP_TOKEN');
  if (token.length < MIN_TOKEN_LENGTH) {
    stop(`JOB_APP_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters (e.g. the output of: openssl rand -hex 32)`);
  }
  const port = wholeNumber('PORT', 3000, { min: 0, max: 65_535 });
  const storeKind = process.env.JOBHOOK_STORE ?? 'postgres';
  if (storeKind !== 'postgres' && storeKind !== 'redis') stop(`JOBHOOK_STORE must be postgres or redis, got ${JSON.stringify(storeKind)}`);
  return {
    token,
    port,
    host: process.env.HOST ?? '127.0.0.1',
    metricsPort: wholeNumber('METRICS_PORT', DEFAULT_METRICS_PORT, { min: 0, max: 65_535 }),
    metricsHost: process.env.METRICS_HOST ?? '127.0.0.1',
    publicUrl: (process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    deadlineMs: wholeNumber('JOBHOOK_RESULT_DEADLINE_MS', 600_000, { min: 1, max: 2_147_483_647 }),
    maxOutstanding: wholeNumber('JOB_APP_MAX_OUTSTANDING', DEFAULT_MAX_OUTSTANDING, { min: 1, max: 1_000_000 }),
    storeKind,
    redisUrl: storeKind === 'redis' ? required('REDIS_URL') : undefined,
    databaseUrl: required('DATABASE_URL'),
    serviceUrl: required('JOBHOOK_SERVICE_URL'),
    apiKey: required('JOBHOOK_API_KEY'),
    publicKeys: readPublicKey(required('JOBHOOK_PUBLIC_KEY')),
    // Optional: tags each submission and refuses webhooks of jobs that are not ours (see the client README).
    recipientSecret: process.env.JOBHOOK_RECIPIENT_SECRET || undefined,
    logLevel: process.env.LOG_LEVEL ?? 'warn',
  };
}
