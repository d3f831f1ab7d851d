// examples/job-app as a child process for the chaos and e2e tests: started on a port, its JSON log
// lines (`job handled`, `reconciled`) reported, killed and restarted by the tests.
import { join } from 'node:path';
import { REPO_ROOT } from './chaos-cluster.js';
import { spawnNode, type ManagedChild } from './chaos-processes.js';

export const JOB_APP = join(REPO_ROOT, 'examples/job-app/server.mjs');

/** Options of {@link startJobApp}. */
export interface JobAppOptions {
  name: string;
  port: number;
  /** `JOB_APP_TOKEN`: what `POST /jobs` and `GET /jobs/:id` need (see {@link jobAppHeaders}); undefined starts the app without one. */
  token: string | undefined;
  databaseUrl: string;
  serviceUrl: string;
  apiKey: string;
  publicKeyFile: string;
  /** What the service calls (a proxy in front of the app, in the chaos test). */
  publicUrl: string;
  deadlineMs: number;
  /** `JOB_APP_MAX_OUTSTANDING`; default the app's. */
  maxOutstanding?: number;
  /** `redis` keeps claims and ledger in Redis (REDIS_URL); default PostgreSQL. */
  store?: 'postgres' | 'redis';
  redisUrl?: string;
  /** Every stdout JSON line, parsed. */
  onLog?: (entry: Record<string, unknown>) => void;
}

/** A started job app. */
export interface JobApp {
  readonly child: ManagedChild;
  /** `http://127.0.0.1:<port>`: the app's public listener. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`: its metrics listener (`METRICS_PORT`, a free port here). */
  readonly metricsUrl: string;
}

/** The headers of a request to the app's job routes: JSON, and `Authorization: Bearer <token>`. */
export function jobAppHeaders(token: string): Record<string, string> {
  return { 'content-type': 'application/json', authorization: `Bearer ${token}` };
}

/** Starts the job app and resolves once it listens; rejects with its output when it exits first. */
export async function startJobApp(options: JobAppOptions): Promise<JobApp> {
  const { child, ready } = await spawnNode({
    name: options.name,
    args: [JOB_APP],
    cwd: REPO_ROOT,
    env: {
      PORT: String(options.port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      // Empty is unset for the app: a token in the test runner's environment never leaks in.
      JOB_APP_TOKEN: options.token ?? '',
      DATABASE_URL: options.databaseUrl,
      JOBHOOK_SERVICE_URL: options.serviceUrl,
      JOBHOOK_API_KEY: options.apiKey,
      JOBHOOK_PUBLIC_KEY: options.publicKeyFile,
      PUBLIC_URL: options.publicUrl,
      JOBHOOK_RESULT_DEADLINE_MS: String(options.deadlineMs),
      ...(options.maxOutstanding === undefined ? {} : { JOB_APP_MAX_OUTSTANDING: String(options.maxOutstanding) }),
      ...(options.store === undefined ? {} : { JOBHOOK_STORE: options.store }),
      ...(options.redisUrl === undefined ? {} : { REDIS_URL: options.redisUrl }),
    },
    ready: /"msg":"listening".*"metrics_port":(\d+)/,
    onLine(line, stream) {
      if (stream !== 'stdout' || !line.startsWith('{')) return;
      try {
        options.onLog?.(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not one of the app's lines
      }
    },
  });
  return { child, url: `http://127.0.0.1:${options.port}`, metricsUrl: `http://127.0.0.1:${ready[1]!}` };
}
