// @jobhook/fastify: work in progress
export {};
