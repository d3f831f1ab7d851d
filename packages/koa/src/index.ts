// @jobhook/koa: work in progress
export {};
