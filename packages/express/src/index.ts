// @jobhook/express: work in progress
export {};
