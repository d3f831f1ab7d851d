#!/usr/bin/env node
// The `jobhook` bin, checked in rather than built: npm links a bin only if its file exists at install
// time, and dist/ does not exist yet right after `npm ci`. The real entry is dist/bin.js (src/bin.ts).
try {
  await import('../dist/bin.js');
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && /[\\/]dist[\\/]/.test(String(err.message))) {
    process.stderr.write('jobhook: not built yet; run `npm run build` at the repository root\n');
    process.exitCode = 2;
  } else {
    throw err;
  }
}
