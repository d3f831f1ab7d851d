/**
 * @jobhook/delivery/internal: what the reference sender (`@jobhook/sender`) shares with the engine
 * beyond its public API: the guard's refusal and deadline helpers (its Redis clients and option
 * checks come from `@jobhook/core/internal`). Not a public API: no semver promise.
 * @packageDocumentation
 * @internal
 */
export { withDeadline } from './deliverer.js';
export { receiverRefused } from './receiver-refusal.js';
