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
  databaseUrl: string;
  serviceUrl: string;
  apiKey: string;
  publicKeyFile: string;
  /** What the service calls (a proxy in front of the app, in the chaos test). */
  publicUrl: string;
  deadlineMs: number;
  /** `redis` keeps claims and ledger in Redis (REDIS_URL); default PostgreSQL. */
  store?: 'postgres' | 'redis';
  redisUrl?: string;
  /** Every stdout JSON line, parsed. */
  onLog?: (entry: Record<string, unknown>) => void;
}

/** Starts the job app and resolves once it listens. */
export async function startJobApp(options: JobAppOptions): Promise<ManagedChild> {
  const { child } = await spawnNode({
    name: options.name,
    args: [JOB_APP],
    cwd: REPO_ROOT,
    env: {
      PORT: String(options.port),
      HOST: '127.0.0.1',
      DATABASE_URL: options.databaseUrl,
      JOBHOOK_SERVICE_URL: options.serviceUrl,
      JOBHOOK_API_KEY: options.apiKey,
      JOBHOOK_PUBLIC_KEY: options.publicKeyFile,
      PUBLIC_URL: options.publicUrl,
      JOBHOOK_RESULT_DEADLINE_MS: String(options.deadlineMs),
      ...(options.store === undefined ? {} : { JOBHOOK_STORE: options.store }),
      ...(options.redisUrl === undefined ? {} : { REDIS_URL: options.redisUrl }),
    },
    ready: /"msg":"listening"/,
    onLine(line, stream) {
      if (stream !== 'stdout' || !line.startsWith('{')) return;
      try {
        options.onLog?.(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not one of the app's lines
      }
    },
  });
  return child;
}
