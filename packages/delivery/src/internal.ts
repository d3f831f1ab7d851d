/**
 * @jobhook/delivery/internal: what the reference sender (`@jobhook/sender`) shares with the engine
 * beyond its public API: the Redis connection helpers of its stores, the queues' job-id check, the
 * guard's refusal and deadline helpers. Not a public API: no semver promise.
 * @packageDocumentation
 * @internal
 */
export { withDeadline } from './deliverer.js';
export { receiverRefused } from './receiver-refusal.js';
export { checkJobId } from './queue/queue-input.js';
export { connectRedis, quitRedis, redisCall, redisFromOption } from './queue/redis-connect.js';
