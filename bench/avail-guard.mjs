// Runs a command (argv) as its own child, stdout/stderr passed through, and ends it when the
// availability bench's IPC channel closes or this process is told to stop: `jobhook serve` has no
// parent watch of its own, and must not outlive a bench that was killed.
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
let stopping = false;

function stop() {
  if (stopping) return;
  stopping = true;
  child.kill('SIGTERM');
  // serve lets running deliveries finish (up to its attempt timeout): the bench needs none of them.
  setTimeout(() => child.kill('SIGKILL'), 2000).unref();
}

child.once('exit', (code, signal) => process.exit(signal === null ? (code ?? 1) : 1));
process.once('disconnect', stop);
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
