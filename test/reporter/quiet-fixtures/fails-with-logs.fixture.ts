import { createJsonLogger } from '@jobhook/core';
import { expect, test } from 'vitest';

test('logs, and passes', () => {
  createJsonLogger().warn({}, 'marker: default logger of a passing test');
  expect(1).toBe(1);
});

test('logs, and fails', () => {
  createJsonLogger().error({ code: 'ERR_STORE_UNAVAILABLE' }, 'marker: default logger of the failing test');
  expect(1).toBe(2);
});
