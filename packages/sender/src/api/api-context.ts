import type { Logger } from '@jobhook/core';
import type { FastifyRequest } from 'fastify';
import type { AccountRegistry, ApiKey } from '../accounts/account-registry.js';
import type { Audience, Authenticate } from '../auth/authenticate.js';
import type { JobRecord, JobStore } from '../jobs/job-record.js';
import type { JobService } from '../jobs/job-service.js';

/** What the routes share. @internal */
export interface ApiContext {
  accounts: AccountRegistry;
  authenticate: Authenticate;
  jobs: JobStore;
  service: JobService;
  /** The SSRF check of `webhook_receiver` at submission (`SsrfGuard.resolveTarget`). */
  checkReceiver(url: string): Promise<unknown>;
  now: () => Date;
  /** Processing time of a job without `input.simulate.delay_ms`. */
  jobDelayMs: number;
  /** Largest canonical size of a job's webhook payload accepted at submission. */
  maxCanonicalBytes: number;
  /** The final job's webhook as the deliverer signs it: the body and its headers, signature included. */
  signWebhook(job: JobRecord): Promise<{ body: Buffer; headers: Readonly<Record<string, string>> }>;
  logger: Logger;
}

const callers = new WeakMap<FastifyRequest, ApiKey>();

/**
 * An `onRequest` hook authenticating the request for `audience`: it runs before the body is read,
 * so an anonymous client cannot make the service parse a megabyte.
 */
export function requireKey(context: ApiContext, audience: Audience) {
  return async function authenticateRequest(request: FastifyRequest): Promise<void> {
    callers.set(request, context.authenticate(request.raw.rawHeaders, audience));
  };
}

/** The key that authenticated the request (set by {@link requireKey}). */
export function callerOf(request: FastifyRequest): ApiKey {
  const key = callers.get(request);
  if (key === undefined) throw new Error('jobhook: route without requireKey');
  return key;
}
