/**
 * @jobhook/client: submit async jobs, poll them, wait for their results.
 * @packageDocumentation
 */
export {};
