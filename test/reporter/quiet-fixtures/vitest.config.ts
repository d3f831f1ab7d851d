// The quiet-output test's own vitest run: these fixture files, printed as `npm test` prints.
import { defineConfig } from 'vitest/config';
import { outputSettings } from '../../helpers/vitest-output.js';

export default defineConfig({
  test: { include: ['*.fixture.ts'], ...outputSettings() },
  resolve: { conditions: ['source'] },
});
