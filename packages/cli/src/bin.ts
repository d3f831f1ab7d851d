#!/usr/bin/env node
import { main } from './index.js';

// `jobhook verify --batch big.jsonl | head` closes our stdout early: that is the reader's choice,
// not a failure worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

// Set exitCode rather than calling process.exit(), so buffered stdout is flushed before exiting.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`jobhook: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 2;
  },
);
