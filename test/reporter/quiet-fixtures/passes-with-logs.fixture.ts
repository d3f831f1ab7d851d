import { createJsonLogger } from '@jobhook/core';
import { expect, test } from 'vitest';

test('logs through core default logger, and passes', () => {
  createJsonLogger().warn({ code: 'ERR_SIGNATURE_INVALID' }, 'marker: default logger of a passing test');
  expect(1).toBe(1);
});

test('prints through the console and straight to stdout, and passes', () => {
  console.error('marker: console.error of a passing test');
  process.stdout.write('marker: stdout of a passing test\n');
  expect(1).toBe(1);
});
