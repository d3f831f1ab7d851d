import type { FastifyInstance } from 'fastify';
import type { DeliveryState, JobListQuery, JobStatus } from '../jobs/job-record.js';
import { JOB_DELIVERIES, JOB_STATUSES, MAX_JOB_PAGE, parseJobCursor } from '../jobs/job-list.js';
import { callerOf, requireKey, type ApiContext } from './api-context.js';
import { badRequest } from './api-error.js';
import { jobViewJson } from './job-view.js';

/** `limit` of a list that does not give one. */
export const DEFAULT_JOB_PAGE = 20;

const PARAMETERS = new Set(['limit', 'cursor', 'status', 'delivery']);

/** The list query from the query string, each parameter checked (400 naming it). */
function listQuery(raw: Record<string, unknown>): JobListQuery {
  for (const name of Object.keys(raw))
    if (!PARAMETERS.has(name)) throw badRequest(`unknown query parameter ${name}: use limit, cursor, status, delivery`);
  const one = (name: string): string | undefined => {
    const value = raw[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw badRequest(`${name} must be given once`);
    return value;
  };
  const query: JobListQuery = { limit: DEFAULT_JOB_PAGE };
  const limit = one('limit');
  if (limit !== undefined) {
    if (!/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_JOB_PAGE)
      throw badRequest(`limit must be an integer from 1 to ${MAX_JOB_PAGE}`);
    query.limit = Number(limit);
  }
  const cursor = one('cursor');
  if (cursor !== undefined) {
    if (parseJobCursor(cursor) === undefined) throw badRequest('cursor must be the next_cursor of a previous page');
    query.cursor = cursor;
  }
  const status = one('status');
  if (status !== undefined) {
    if (!(JOB_STATUSES as readonly string[]).includes(status)) throw badRequest(`status must be one of ${JOB_STATUSES.join(', ')}`);
    query.status = status as JobStatus;
  }
  const delivery = one('delivery');
  if (delivery !== undefined) {
    if (!(JOB_DELIVERIES as readonly string[]).includes(delivery)) throw badRequest(`delivery must be one of ${JOB_DELIVERIES.join(', ')}`);
    query.delivery = delivery as DeliveryState | 'none';
  }
  return query;
}

/**
 * `GET /v3/universal-ai/async`: the caller organization's jobs, newest first, as polled, a page at a
 * time: `{ jobs, next_cursor }` (pass `cursor=<next_cursor>` for the next page; null at the end).
 * Filters `status` and `delivery`; `limit` 1–100 (default 20). Inference keys only.
 */
export function registerJobListRoute(app: FastifyInstance, context: ApiContext): void {
  app.get('/v3/universal-ai/async', { onRequest: requireKey(context, { kind: 'inference' }) }, async (request, reply) => {
    const query = listQuery(request.query as Record<string, unknown>);
    const page = await context.jobs.listJobs(callerOf(request).organizationId, query);
    // Each job's view is exact JSON text (big integers, 1.0): spliced, not re-encoded.
    const jobs = page.jobs.map(jobViewJson).join(',');
    reply.type('application/json; charset=utf-8').send(`{"jobs":[${jobs}],"next_cursor":${JSON.stringify(page.nextCursor)}}`);
  });
}

/**
 * `GET /v3/universal-ai/async/counts`: how many jobs the caller organization has, all of them (the
 * list gives a page at a time): `{ jobs, status: { processing, success, fail }, delivery: { pending,
 * delivered, rejected, failed, none } }`. The stores keep the counts with each change of a job, so
 * the answer costs the same however many jobs there are. No query parameter. Inference keys only.
 */
export function registerJobCountsRoute(app: FastifyInstance, context: ApiContext): void {
  app.get('/v3/universal-ai/async/counts', { onRequest: requireKey(context, { kind: 'inference' }) }, async (request) => {
    const names = Object.keys(request.query as Record<string, unknown>);
    if (names.length > 0) throw badRequest(`unknown query parameter ${names[0]}: counts takes none`);
    return context.jobs.countJobs(callerOf(request).organizationId);
  });
}
