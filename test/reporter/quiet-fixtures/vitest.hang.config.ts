// As vitest.config.ts, with a handle left open in vitest's own process: its closing times out, and
// vitest prints why before it exits.
import { defineConfig, mergeConfig } from 'vitest/config';
import quiet from './vitest.config.js';

setInterval(() => {}, 60_000);

export default mergeConfig(quiet, defineConfig({ test: { teardownTimeout: 500 } }));
