import type { FastifyInstance } from 'fastify';
import { UUID_PATTERN } from '../accounts/validate-accounts-config.js';
import { MANAGE_READ_SCOPE } from '../auth/authenticate.js';
import { notFound } from './api-error.js';
import { callerOf, requireKey, type ApiContext } from './api-context.js';

/**
 * `GET /v3/manage/keys/{key_id}/` (spec §4.1): one key of the caller's organization as the
 * ManagementKey of §2.1, never its secret. Management keys with `manage:read` only. The same 404
 * for another organization's key, an unknown id and a non-UUID id (a legacy key has no id, so it
 * is never addressable). The path works with or without the trailing slash.
 */
export function registerManageRoutes(app: FastifyInstance, context: ApiContext): void {
  const onRequest = requireKey(context, { kind: 'management', scope: MANAGE_READ_SCOPE });
  app.get('/v3/manage/keys/:key_id/', { onRequest }, async (request) => {
    const { key_id: keyId } = request.params as { key_id: string };
    if (!UUID_PATTERN.test(keyId)) throw notFound('key');
    const key = context.accounts.findById(callerOf(request).organizationId, keyId);
    if (key === undefined) throw notFound('key');
    return context.accounts.managementView(key);
  });
}
