import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

/**
 * `GET /metrics`: the registry in Prometheus text format. Unauthenticated, like a health check:
 * it tells delivery counts only, never a job, key or receiver.
 * @internal
 */
export function registerMetricsRoute(app: FastifyInstance, registry: Registry): void {
  app.get('/metrics', async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).send(text);
  });
}
